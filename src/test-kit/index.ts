/**
 * The test kit: what the package's `shuttle/testing` entry point exports (src/public/testing.ts).
 */
export {
  TestEnvironmentStalledError,
  createTestEnvironment,
  type ActivityMock,
  type MockedActivityCall,
  type TestEnvironment,
  type TestEnvironmentOptions,
} from './test-environment';
