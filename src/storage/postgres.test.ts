import { afterAll, beforeAll } from 'vitest';
import { describeStorageConformance } from './conformance.test-support';
import { createTestDatabase, postgresConformanceFactory, type TestDatabase } from './postgres.test-support';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.drop();
});

describeStorageConformance(
  'PostgresStorage on a PostgreSQL server',
  postgresConformanceFactory(() => database.url),
);
