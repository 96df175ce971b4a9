/**
 * `shuttle/testing`: the test kit for your own workflows — an engine in memory on a simulated clock, with
 * activity mocks by name, time skipping, and a result that skips time (src/test-kit; guide:
 * docs/testing-workflows.md).
 */
export * from '../test-kit';
