/**
 * `--codec <module>`: the payload codec a server process uses (`createEngine({ codec })`, docs/engine.md,
 * "Payload codec"), loaded from the operator's own module — `export const codec = { name, encode, decode }`
 * (or the default export), TypeScript or JavaScript, loaded through tsx like a definitions file. Every
 * process on an encoded store needs it: workers, `shuttle serve`, and the operator commands.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { checkPayloadCodec, type PayloadCodec } from '../engine';
import { StartupError } from './store';

/** Loads and checks the codec `path` exports; a StartupError naming the file and what is wrong. */
export async function loadCodecModule(path: string): Promise<PayloadCodec> {
  const file = resolve(path);
  if (!existsSync(file)) throw new StartupError(`--codec ${path}: no such file.`);
  let exported: Record<string, unknown>;
  try {
    exported = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (error) {
    throw new StartupError(
      `--codec ${path}: the module threw while loading: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`,
    );
  }
  const candidate = exported.codec ?? exported.default;
  if (candidate === undefined)
    throw new StartupError(
      `--codec ${path}: the module exports no codec; export one as \`export const codec = { name, encode, decode }\` (or as the default export).`,
    );
  try {
    return checkPayloadCodec(candidate);
  } catch (error) {
    throw new StartupError(`--codec ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
}
