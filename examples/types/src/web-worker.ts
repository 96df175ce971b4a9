// The app's engine worker: the worker side of the browser runtime (`shuttle/browser-worker`).
import { runBrowserEngine } from 'shuttle/browser-worker';
import { greet } from './workflows';

runBrowserEngine({ workflows: [greet], durability: 'strict' });
