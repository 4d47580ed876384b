// `npm run openapi`: writes docs/openapi.json from the route schemas (a test fails when it drifts).
import { writeFile } from 'node:fs/promises';
import { buildOpenApi } from '../api/openapi.js';

export const committedServerUrl = 'http://localhost:3000';
await writeFile('docs/openapi.json', `${JSON.stringify(await buildOpenApi(committedServerUrl), null, 2)}\n`);
console.log('docs/openapi.json');
