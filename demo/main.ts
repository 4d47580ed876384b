// `npm run demo`: the offline demo (docs/demo.md). Its own entry, apart from the production CLI:
// the product's start commands never wire the emulators.
import { runDemo } from './demo.js';

await runDemo();
