// `npm run db:migrate`: apply pending migrations to DATABASE_URL, or to the local PGlite store.
import { getDatabase } from "@/lib/db/client";

async function main(): Promise<void> {
  const database = await getDatabase();
  console.log(`Migrations applied (${database.driver}).`);
  await database.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
