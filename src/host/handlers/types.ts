/**
 * What a handler of the wire contract is, and what the host gives its handlers. Each domain of the protocol
 * (src/protocol: workflows, schedules, queues, definitions, inspection, fleet) has one module here that serves its
 * declared methods; `createHandlers` (index.ts) puts them together, and the type checker refuses a
 * declared method without its handler.
 */
import type { Engine } from '../../engine';
import type { Method, Params, Result, WorkerConfig, WorkerMessage } from '../../protocol';
import type { Storage } from '../../storage/types';

/** How the host talks to its page. */
export type HostPort = {
  /** Sends one message to the page. May throw (e.g. `DataCloneError`); the host handles that. */
  post(message: WorkerMessage): void;
  /** Calls `listener` with every message from the page; returns the function that stops listening. */
  listen(listener: (data: unknown) => void): () => void;
};

/** Serves one method: its params, validated by `parseRequest`, and the port it came from. */
export type Handler<M extends Method> = (params: Params<M>, port: HostPort) => Promise<Result<M>>;

/** The handlers of one domain: one per method it declares. */
export type DomainHandlers<D> = { readonly [M in keyof D & Method]: Handler<M> };

/** One handler per method of the protocol: the whole surface a page can reach, typed by method. */
export type Handlers = { readonly [M in Method]: Handler<M> };

/** What the host lends its handlers. */
export type HandlerContext = {
  /** The engine, once it runs (requests sent right behind the first `hello` wait for it). */
  engine(): Promise<Engine>;
  /** The store, once open (null before `hello`, or if it failed to open). */
  storage(): Storage | null;
  /** The database and mode this host serves (null before the first `hello`). */
  config(): WorkerConfig | null;
  now(): number;
  /** Whether the studio may compile, save and delete definitions here (not on a server, by default). */
  authoring: boolean;
  /** Where the host runs. */
  runtime: 'tab' | 'server';
};

/** A handler that runs `act` on the engine once it is there (its method is inferred from where it goes). */
export function engineHandler(context: HandlerContext) {
  return <M extends Method>(act: (engine: Engine, params: Params<M>) => Promise<Result<M>>): Handler<M> =>
    async (params) =>
      act(await context.engine(), params);
}

/** An error named for people: why this host cannot serve requests (yet). */
export function unavailableError(message: string): Error {
  return Object.assign(new Error(message), { name: 'EngineUnavailableError' });
}

/** An error about the conversation itself (wrong order, wrong config, a method this host does not serve). */
export function protocolMisuse(message: string): Error {
  return Object.assign(new Error(message), { name: 'ProtocolError' });
}

/**
 * The refusal of a claim by an engine that claims nothing: a viewer tab's, or the studio server's observer.
 * Says where the workflow can be taken over instead.
 */
export function observerCannotClaim(context: HandlerContext, engineId: string, workflowId: string): Error {
  const message =
    context.runtime === 'server'
      ? `This studio server's engine is an observer: it claims no workflow, so it cannot take '${workflowId}' over. The worker processes (shuttle worker) take it over by themselves once its holder is expired or dead; start one if none runs.`
      : `This tab is a viewer (?engine=off): its engine claims no workflow, so it cannot take '${workflowId}' over. Take it over from a tab that runs an engine (open the studio without ?engine=off); such a tab also takes it over by itself once its holder is expired or dead.`;
  return Object.assign(new Error(message), { name: 'ObserverCannotClaimError', workflowId, engineId });
}
