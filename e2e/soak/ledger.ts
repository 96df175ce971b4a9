/**
 * The browser soak's ledger: an HTTP server in the test process that every activity body of the soak's
 * workflow calls first, before it does anything else, with `(workflowId, step, attempt)`. It is independent
 * of the engine — a different process, no IndexedDB, nothing the tabs can roll back — so it records what
 * really ran, whichever tab ran it and whatever happened to that tab afterwards.
 *
 * A second call for one `(workflowId, step, attempt)` — an attempt executed twice — is answered 409 and kept
 * as a conflict; the checks report every conflict as a violation. Requests are CORS "simple" requests (POST
 * `text/plain`), answered with `Access-Control-Allow-Origin: *`, so a studio worker on another origin may
 * call it without a preflight.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One activity execution, as its body reported it. */
export type LedgerRow = {
  workflowId: string;
  step: string;
  attempt: number;
  /** When the ledger received it (ms since the epoch, the test process's clock). */
  at: number;
};

/** The key of an attempt: the same for every execution of one attempt. */
export function attemptKey(workflowId: string, step: string, attempt: number): string {
  return `${workflowId}|${step}|${attempt}`;
}

function parseRow(body: string): Omit<LedgerRow, 'at'> | null {
  try {
    const value = JSON.parse(body) as Record<string, unknown>;
    const { workflowId, step, attempt } = value;
    if (typeof workflowId !== 'string' || typeof step !== 'string') return null;
    if (typeof attempt !== 'number' || !Number.isInteger(attempt) || attempt < 1) return null;
    return { workflowId, step, attempt };
  } catch {
    return null;
  }
}

export class Ledger {
  /** Every execution recorded, in arrival order (the first execution of each attempt). */
  readonly rows: LedgerRow[] = [];
  /** Second and later executions of an attempt already recorded. */
  readonly conflicts: LedgerRow[] = [];
  /** Requests that were not a ledger row (malformed): each is a violation too. */
  readonly malformed: string[] = [];
  readonly #keys = new Set<string>();

  private constructor(
    private readonly server: Server,
    /** The URL activity bodies POST to. */
    readonly url: string,
  ) {}

  /** Starts a ledger on a free port of 127.0.0.1. */
  static async start(): Promise<Ledger> {
    let ledger: Ledger | null = null;
    const server = createServer((request, response) => ledger!.handle(request, response));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    ledger = new Ledger(server, `http://127.0.0.1:${port}/ledger`);
    return ledger;
  }

  /** How many executions of this attempt were recorded (0, 1, or more: a conflict). */
  count(workflowId: string, step: string, attempt: number): number {
    const key = attemptKey(workflowId, step, attempt);
    if (!this.#keys.has(key)) return 0;
    return (
      1 + this.conflicts.filter((row) => attemptKey(row.workflowId, row.step, row.attempt) === key).length
    );
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    response.setHeader('Access-Control-Allow-Origin', '*');
    response.setHeader('Access-Control-Allow-Methods', 'POST');
    response.setHeader('Access-Control-Allow-Headers', 'content-type');
    if (request.method === 'OPTIONS') {
      response.writeHead(204).end();
      return;
    }
    if (request.method !== 'POST' || request.url !== '/ledger') {
      response.writeHead(404).end('not the ledger');
      return;
    }
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      const row = parseRow(body);
      if (!row) {
        this.malformed.push(body.slice(0, 200));
        response.writeHead(400).end('malformed ledger row');
        return;
      }
      const recorded = { ...row, at: Date.now() };
      const key = attemptKey(row.workflowId, row.step, row.attempt);
      if (this.#keys.has(key)) {
        this.conflicts.push(recorded);
        response.writeHead(409).end(`attempt ${row.attempt} of ${row.step} of ${row.workflowId} ran before`);
        return;
      }
      this.#keys.add(key);
      this.rows.push(recorded);
      response.writeHead(200).end('recorded');
    });
  }
}
