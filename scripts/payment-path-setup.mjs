// Loaded by scripts/payment-path.mjs (jest's setupFilesAfterEnv): a V8 coverage snapshot right
// before and right after each test, so the snapshot in between holds what the test itself ran
// (the stack's start and its teardown fall in the others). takeCoverage resets the counters.
import v8 from 'node:v8';

beforeEach(() => v8.takeCoverage());
afterEach(() => v8.takeCoverage());
