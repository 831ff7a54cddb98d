// Libraries the workflow code uses that hold no state of a conversation: loaded once per worker and shared by every
// workflow run on it (the bundle's `preloadModules`), instead of evaluated again for every run. Requiring them here, and
// using the result, keeps the bundler from dropping the import of a package that says it has no side effects.
//
// The SDK deep-freezes what shared modules export. zod fills in its global config the first time it needs each part —
// the default locale (the first check), the memoizer (the first container schema): both are built here, before the
// freeze, so that object is never written after (test/unit/shared-libraries.test.ts checks the config is complete).
// The schemas built from it are shared too, through common/shared-once.ts: its map is not an export, so not frozen.
import { RE2JS } from 're2js';
import { z } from 'zod';
import { sharedOnce } from '../common/shared-once';

// No code generation: zod compiles an object schema to a function on its first parse, which cost more than it saved
// while each run built its own schemas; left off since they are shared (common/shared-once.ts), not measured again.
z.config({ jitless: true });
z.object({ primed: z.string().min(1) }).transform((value) => value);

export const SHARED_LIBRARIES = [z.object, RE2JS.compile, sharedOnce];
