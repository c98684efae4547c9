// `npm run db:migrate`: apply pending migrations to DATABASE_URL, or to the local PGlite store.
import { getDatabase } from "@/lib/db/client";

const database = await getDatabase();
console.log(`Migrations applied (${database.driver}).`);
await database.close();
