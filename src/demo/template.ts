import type { Logger } from 'pino';
import type { Settings } from '../services/settings.js';
import { openDatabase } from '../db/database.js';
import { demoTemplatePath, embeddedTemplatePath, writeEmbeddedTemplate } from '../db/embedded-template.js';
import { seedAgentTemplates } from '../db/seed.js';
import { systemClock, type ServiceEnv } from '../services/context.js';
import { idleDialer } from '../services/dialer/control.js';
import { inProcessEventBus } from '../services/events.js';
import { idleVoice } from '../services/voice/control.js';
import { markDemoSeeded } from './redate.js';
import { seedDemo } from './seed.js';

// Seeding the demo through the services took a first start 1.5 s or more: the embedded database runs
// each statement for the first time, and Prisma loads and compiles its query compiler. `npm install`
// seeds it once into a template of its own, a copy of the migrated template; a first start with demo
// data copies that one and moves its data to the present (redate.ts).

/** Writes the demo template from the migrated one at `base`, seeded now with `settings`. */
export async function writeDemoTemplate(settings: Settings, log: Logger, options: { path?: string; base?: string } = {}): Promise<void> {
  const clock = systemClock;
  await writeEmbeddedTemplate(
    options.path ?? demoTemplatePath,
    async (pglite, dir) => {
      // The template's own instance: closing it is the template writer's.
      const db = await openDatabase({ kind: 'pglite', instance: pglite });
      const env: ServiceEnv = {
        db: db.prisma,
        sql: db.sql,
        clock,
        log,
        settings,
        dialer: idleDialer,
        events: inProcessEventBus(log),
        voice: idleVoice,
      };
      await seedAgentTemplates(db);
      await seedDemo(env);
      await markDemoSeeded(db.sql, dir, clock.now());
    },
    options.base ?? embeddedTemplatePath,
  );
}
