/**
 * The service: a Shuttle worker in this process (embedded PGlite in `.data/` by default, PostgreSQL when
 * DATABASE_URL is set — run several processes on one database and they share the work) and the HTTP API.
 */
import { serve } from '@hono/node-server';
import { startWorker } from 'shuttle/server';
import { createApp } from './app';
import { order } from './workflows';

const worker = await startWorker({
  definitions: [order],
  ...(process.env.DATABASE_URL ? { databaseUrl: process.env.DATABASE_URL } : { dataDir: '.data' }),
  label: `service-${process.pid}`,
});
const server = serve(
  {
    fetch: createApp(worker.engine, { shuttleToken: process.env.SHUTTLE_TOKEN }).fetch,
    port: Number(process.env.PORT ?? 3000),
  },
  (info) =>
    console.log(
      `listening on http://localhost:${info.port} (engine ${worker.engineId}, ${worker.store.label})`,
    ),
);

for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    server.close();
    void worker.stop().then(() => process.exit(0));
  });
