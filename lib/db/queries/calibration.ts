import { and, eq, sql } from "drizzle-orm";
import { z } from "zod";
import {
  type Calibration,
  type CalibrationSample,
  type ClassFit,
  carriedFit,
  EARLIER_CLASS_LISTS,
  nextCalibration,
} from "@/lib/context/calibration";
import { PROBED_FAMILIES } from "@/lib/context/class-priors";
import { FIT_MEASURES, type FitMeasure } from "@/lib/context/content-class";
import { LruMap } from "@/lib/lru-map";
import type { Db } from "../client";
import { prepared } from "../prepared";
import { modelCalibration } from "../schema";

const ratio = z.number().finite();

/**
 * A covariance is stored packed: its doubles little-endian, in base64. That is half the text
 * of the numbers written out, and Postgres takes one string into the jsonb instead of parsing
 * two thousand numbers into numerics on every turn's write (measured: 2.4 → 1.1 ms of machine
 * CPU a write). Exact both ways, so a reread fit equals the one written. Rows written before
 * hold arrays, which still parse.
 */
export function packCovariance(values: readonly number[]): string {
  const bytes = Buffer.allocUnsafe(values.length * 8);
  values.forEach((value, i) => {
    bytes.writeDoubleLE(value, i * 8);
  });
  return bytes.toString("base64");
}

/** The doubles of a packed covariance; null when the text is not a whole number of them. */
function unpackCovariance(packed: string): number[] | null {
  const bytes = Buffer.from(packed, "base64");
  if (bytes.length % 8 !== 0) return null;
  return Array.from({ length: bytes.length / 8 }, (_, i) => bytes.readDoubleLE(i * 8));
}

const covarianceValues = z.union([
  z.array(z.number().finite()),
  z.string().transform(unpackCovariance).pipe(z.array(z.number().finite())),
]);

/**
 * The stored per-class fit. One written for an earlier class list Fold knows is carried over
 * class by class (carriedFit); one for any other list (a class missing, an unknown one, a
 * covariance of another size) parses as null, so the model's classes start cold rather than
 * reading ratios under the wrong names.
 */
const fitRatios = z.strictObject(
  Object.fromEntries(FIT_MEASURES.map((c) => [c, ratio])) as Record<FitMeasure, typeof ratio>,
);
const squareCovariance = covarianceValues.refine(
  (covariance) => covariance.length === FIT_MEASURES.length ** 2,
);
/**
 * The probed families' fits beside the open one (absent in a fit stored before they were
 * weighed: they start from their probes). Families of another count parse as absent too.
 */
const familyFitsSchema = z
  .object({
    logWeights: z.array(z.number().finite()),
    ratios: z.array(fitRatios),
    covariance: squareCovariance,
  })
  .refine(
    (families) =>
      families.ratios.length === PROBED_FAMILIES.length &&
      families.logWeights.length === PROBED_FAMILIES.length + 1,
  )
  .optional()
  .catch(undefined);
const classFitSchema = z.object({
  ratios: fitRatios,
  open: fitRatios.optional().catch(undefined),
  covariance: squareCovariance,
  families: familyFitsSchema,
});

const anyFitSchema = z.object({
  ratios: z.record(z.string(), ratio),
  covariance: covarianceValues,
});

function parseClassFit(value: unknown): ClassFit | null {
  const parsed = classFitSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const stored = anyFitSchema.safeParse(value);
  if (!stored.success) return null;
  const keys = Object.keys(stored.data.ratios);
  const earlier = EARLIER_CLASS_LISTS.find(
    (list) =>
      list.length === keys.length &&
      list.every((c) => keys.includes(c)) &&
      stored.data.covariance.length === list.length ** 2,
  );
  return earlier ? carriedFit(stored.data, earlier) : null;
}

type Row = { ratio: number; samples: number; classFit: unknown };
const toCalibration = (row: Row): Calibration & { classFit: ClassFit | null } => ({
  ratio: row.ratio,
  samples: row.samples,
  classFit: parseClassFit(row.classFit),
});

const columns = {
  ratio: modelCalibration.ratio,
  samples: modelCalibration.samples,
  classFit: modelCalibration.classFit,
};

/** The model's calibration, or null before its first sample (kept briefly: see Writer). */
export async function getCalibration(
  db: Db,
  provider: string,
  model: string,
): Promise<Calibration | null> {
  const writer = writerFor(db, provider, model);
  if (writer.known !== undefined && Date.now() - writer.knownAt < KNOWN_FRESH_MS) {
    return writer.known;
  }
  const query = prepared(db, "get_calibration", (on, name) =>
    on
      .select(columns)
      .from(modelCalibration)
      .where(
        and(
          eq(modelCalibration.provider, sql.placeholder("provider")),
          eq(modelCalibration.model, sql.placeholder("model")),
        ),
      )
      .prepare(name),
  );
  const [row] = await query.execute({ provider, model });
  const calibration = row ? toCalibration(row) : null;
  know(writer, calibration);
  return calibration;
}

export async function listCalibrations(db: Db) {
  const rows = await db.select().from(modelCalibration);
  return rows.map((row) => ({ ...row, ...toCalibration(row) }));
}

/**
 * Each model's calibration as this process last read or wrote it, and the write in progress.
 * Samples from this process fold in one after another, each normally one UPDATE that applies
 * only if the row is still the one it extends (its sample count, which every write raises);
 * another instance's write, or a row this process has not read, takes the locking
 * transaction. Turns read it from here for a short while: another instance's samples reach
 * this one within that, or at its own next sample.
 */
type Writer = {
  /** Undefined until read or written; null when the model has no row. */
  known: Calibration | null | undefined;
  knownAt: number;
  tail: Promise<unknown>;
};
const KNOWN_FRESH_MS = 30_000;
const WRITERS_MAX_ENTRIES = 256;
const writersByDb = new WeakMap<Db, LruMap<string, Writer>>();

function writerFor(db: Db, provider: string, model: string): Writer {
  let writers = writersByDb.get(db);
  if (!writers) {
    writers = new LruMap(WRITERS_MAX_ENTRIES);
    writersByDb.set(db, writers);
  }
  const key = `${provider}:${model}`;
  let writer = writers.get(key);
  if (!writer) {
    writer = { known: undefined, knownAt: 0, tail: Promise.resolve() };
    writers.set(key, writer);
  }
  return writer;
}

function know(writer: Writer, calibration: Calibration | null | undefined): void {
  writer.known = calibration;
  writer.knownAt = Date.now();
}

/** Folds one turn's sample into the model's calibration; two turns finishing at once both count. */
export function recordCalibrationSample(
  db: Db,
  provider: string,
  model: string,
  sample: CalibrationSample,
): Promise<Calibration> {
  const writer = writerFor(db, provider, model);
  const written = writer.tail.then(async () => {
    const next = writer.known ? await extendKnown(db, provider, model, writer.known, sample) : null;
    const calibration = next ?? (await recordLocked(db, provider, model, sample));
    know(writer, calibration);
    return calibration;
  });
  // A failed write leaves the row unknown: the next read or sample reads it again.
  writer.tail = written.catch(() => know(writer, undefined));
  return written;
}

/** A fit as the row holds it: its covariances packed. */
function storedFit(fit: ClassFit) {
  const { families } = fit;
  return {
    ...fit,
    covariance: packCovariance(fit.covariance),
    families: families && { ...families, covariance: packCovariance(families.covariance) },
  };
}

/** The columns a new calibration writes. */
const storedColumns = (next: Calibration) => ({
  ratio: next.ratio,
  samples: next.samples,
  classFit: next.classFit ? storedFit(next.classFit) : next.classFit,
  updatedAt: new Date(),
});

/** One UPDATE from the calibration this process last wrote; null when the row moved on since. */
async function extendKnown(
  db: Db,
  provider: string,
  model: string,
  known: Calibration,
  sample: CalibrationSample,
): Promise<Calibration | null> {
  const next = nextCalibration(known, sample);
  const updated = await db
    .update(modelCalibration)
    .set(storedColumns(next))
    .where(
      and(
        eq(modelCalibration.provider, provider),
        eq(modelCalibration.model, model),
        eq(modelCalibration.samples, known.samples),
      ),
    )
    .returning({ samples: modelCalibration.samples });
  return updated.length > 0 ? next : null;
}

/** The row read and written under its lock (created first if missing). */
async function recordLocked(
  db: Db,
  provider: string,
  model: string,
  sample: CalibrationSample,
): Promise<Calibration> {
  const where = and(eq(modelCalibration.provider, provider), eq(modelCalibration.model, model));
  return db.transaction(async (tx) => {
    await tx
      .insert(modelCalibration)
      .values({ provider, model, ratio: 1, samples: 0 })
      .onConflictDoNothing();
    const [row] = await tx.select(columns).from(modelCalibration).where(where).for("update");
    if (!row) throw new Error("calibration row vanished inside its transaction");
    const next = nextCalibration(toCalibration(row), sample);
    await tx.update(modelCalibration).set(storedColumns(next)).where(where);
    return next;
  });
}
