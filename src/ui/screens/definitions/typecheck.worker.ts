/**
 * The editor's type-checking worker: the TypeScript language service (type-checker.ts) off the page's
 * thread, so typing never waits for it. Started by typecheck-client.ts when an editor opens; neither
 * TypeScript nor the libs and declarations it reads are in the page's bundles (this worker is a bundle of its
 * own). How it answers: typecheck-service.ts.
 */
import libs from 'virtual:typescript-libs';
import declarations from '../../../public/workflow.ts?declarations';
import { TypeChecker } from './type-checker';
import type { TypeCheckRequest } from './typecheck-protocol';
import { serveTypeChecks } from './typecheck-service';

const serve = serveTypeChecks(new TypeChecker({ libs, declarations }), (response) => postMessage(response));

addEventListener('message', (event: MessageEvent<TypeCheckRequest>) => serve(event.data));
