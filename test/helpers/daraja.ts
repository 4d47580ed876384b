// Moved to emulators/daraja/sandbox.ts (the offline demo uses it too); kept here for the tests' imports.
export { connectBody, sandboxPasskey, sandboxPaybill, sandboxTill } from '../../emulators/daraja/sandbox.js';
