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

/** Marks a covariance packed as its upper triangle, row by row, the diagonal included. */
const TRIANGLE = "u:";

/**
 * A covariance is stored packed: its doubles little-endian, in base64. That is half the text
 * of the numbers written out, and Postgres takes one string into the jsonb instead of parsing
 * two thousand numbers into numerics on every turn's write (measured: 2.4 → 1.1 ms of machine
 * CPU a write). A symmetric one (as calibration keeps them) keeps only its upper triangle,
 * marked `u:`: 528 doubles of 1,024, a row of about 19 KB rather than 30 KB on every turn's
 * write. Exact both ways, so a reread fit equals the one written. Rows written before hold the
 * whole matrix, or arrays, which still parse.
 */
export function packCovariance(values: readonly number[]): string {
  const n = Math.round(Math.sqrt(values.length));
  const symmetric = n * n === values.length && isSymmetric(values, n);
  const kept = symmetric ? upperTriangle(values, n) : values;
  const bytes = Buffer.allocUnsafe(kept.length * 8);
  kept.forEach((value, i) => {
    bytes.writeDoubleLE(value, i * 8);
  });
  const packed = bytes.toString("base64");
  return symmetric ? `${TRIANGLE}${packed}` : packed;
}

function isSymmetric(values: readonly number[], n: number): boolean {
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) if (values[i * n + j] !== values[j * n + i]) return false;
  }
  return true;
}

function upperTriangle(values: readonly number[], n: number): number[] {
  const kept: number[] = [];
  for (let i = 0; i < n; i++) for (let j = i; j < n; j++) kept.push(values[i * n + j] ?? 0);
  return kept;
}

/** The whole matrix of an upper triangle; null when the count is not a triangle's. */
function fromUpperTriangle(kept: readonly number[]): number[] | null {
  const n = (Math.sqrt(8 * kept.length + 1) - 1) / 2;
  if (!Number.isInteger(n)) return null;
  const values = new Array<number>(n * n);
  let at = 0;
  for (let i = 0; i < n; i++) {
    for (let j = i; j < n; j++) {
      const value = kept[at++] ?? 0;
      values[i * n + j] = value;
      values[j * n + i] = value;
    }
  }
  return values;
}

/**
 * The doubles of a packed covariance, the whole matrix of a `u:` triangle; null when the text is
 * not a whole number of them, or a triangle's are not a triangle's count.
 */
function unpackCovariance(packed: string): number[] | null {
  const triangle = packed.startsWith(TRIANGLE);
  const bytes = Buffer.from(triangle ? packed.slice(TRIANGLE.length) : packed, "base64");
  if (bytes.length % 8 !== 0) return null;
  const values = Array.from({ length: bytes.length / 8 }, (_, i) => bytes.readDoubleLE(i * 8));
  return triangle ? fromUpperTriangle(values) : values;
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
  /** How settled each class is; absent in a fit stored before counts were held back. */
  settled: z.record(z.string(), ratio).optional().catch(undefined),
  /** The last turns' misses; absent in a fit stored before they were kept. */
  misses: z.array(z.number().finite().nonnegative()).optional().catch(undefined),
});

const namedRatios = z.record(z.string(), ratio);
/** A fit stored under another measure list: what carriedFit can keep of it, each part if sound. */
const anyFitSchema = z.object({
  ratios: namedRatios,
  covariance: covarianceValues,
  open: namedRatios.optional().catch(undefined),
  families: z
    .object({
      logWeights: z.array(z.number().finite()),
      ratios: z.array(namedRatios),
      covariance: covarianceValues,
    })
    .optional()
    .catch(undefined),
  settled: z.record(z.string(), ratio).optional().catch(undefined),
  misses: z.array(z.number().finite().nonnegative()).optional().catch(undefined),
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
  if (!earlier) return null;
  const { families } = stored.data;
  // Families stored under the same list, or none: a part of another shape is dropped.
  const sound =
    families &&
    families.covariance.length === earlier.length ** 2 &&
    families.ratios.every((r) => earlier.every((c) => r[c] !== undefined));
  return carriedFit({ ...stored.data, families: sound ? families : undefined }, earlier);
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
 * Each model's calibration as this process last read or wrote it, and the samples waiting to
 * be written. Samples from this process fold in one write at a time: those that arrive while
 * a write is in progress wait and go together in the next, so twenty turns of one model ending
 * at once cost two or three writes of its row, not twenty in a queue. A write is normally one
 * UPDATE that applies only if the row is still the one it extends (its sample count, which
 * every write raises); another instance's write, or a row this process has not read, takes
 * the locking transaction. Turns read it from here for a short while: another instance's
 * samples reach this one within that, or at its own next sample.
 */
type Writer = {
  /** Undefined until read or written; null when the model has no row. */
  known: Calibration | null | undefined;
  knownAt: number;
  /** Samples for the next write, each with the turn waiting for it. */
  queued: QueuedSample[];
  /** Whether a write is in progress (it takes what is queued when it ends). */
  writing: boolean;
};
type QueuedSample = {
  sample: CalibrationSample;
  resolve: (calibration: Calibration) => void;
  reject: (error: unknown) => void;
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
    writer = { known: undefined, knownAt: 0, queued: [], writing: false };
    writers.set(key, writer);
  }
  return writer;
}

function know(writer: Writer, calibration: Calibration | null | undefined): void {
  writer.known = calibration;
  writer.knownAt = Date.now();
}

/**
 * Folds one turn's sample into the model's calibration; turns finishing at once all count.
 * Resolves once the sample is stored, with the calibration its write left.
 */
export function recordCalibrationSample(
  db: Db,
  provider: string,
  model: string,
  sample: CalibrationSample,
): Promise<Calibration> {
  const writer = writerFor(db, provider, model);
  return new Promise((resolve, reject) => {
    writer.queued.push({ sample, resolve, reject });
    if (!writer.writing) void writeQueued(db, provider, model, writer);
  });
}

/** Writes what is queued, one batch after another, until nothing is left. Never throws. */
async function writeQueued(db: Db, provider: string, model: string, writer: Writer) {
  writer.writing = true;
  while (writer.queued.length > 0) {
    const batch = writer.queued.splice(0);
    const samples = batch.map((queued) => queued.sample);
    try {
      const next = writer.known
        ? await extendKnown(db, provider, model, writer.known, samples)
        : null;
      const calibration = next ?? (await recordLocked(db, provider, model, samples));
      know(writer, calibration);
      for (const queued of batch) queued.resolve(calibration);
    } catch (error) {
      // A failed write leaves the row unknown: the next read or sample reads it again.
      know(writer, undefined);
      for (const queued of batch) queued.reject(error);
    }
  }
  writer.writing = false;
}

/** A calibration after each of `samples` in turn. */
function afterSamples(
  previous: Calibration | null | undefined,
  samples: readonly CalibrationSample[],
): Calibration {
  let next = previous;
  for (const sample of samples) next = nextCalibration(next, sample);
  if (!next) throw new Error("a calibration write needs at least one sample");
  return next;
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
  samples: readonly CalibrationSample[],
): Promise<Calibration | null> {
  const next = afterSamples(known, samples);
  // Prepared: every turn's tail may run it. The fit is serialized here (SQL NULL for none).
  const query = prepared(db, "extend_calibration", (on, name) =>
    on
      .update(modelCalibration)
      .set({
        ratio: sql`${sql.placeholder("ratio")}`,
        samples: sql`${sql.placeholder("samples")}`,
        classFit: sql`${sql.placeholder("classFit")}::jsonb`,
        updatedAt: sql`${sql.placeholder("updatedAt")}`,
      })
      .where(
        and(
          eq(modelCalibration.provider, sql.placeholder("provider")),
          eq(modelCalibration.model, sql.placeholder("model")),
          eq(modelCalibration.samples, sql.placeholder("knownSamples")),
        ),
      )
      .returning({ samples: modelCalibration.samples })
      .prepare(name),
  );
  const columns = storedColumns(next);
  const updated = await query.execute({
    ratio: columns.ratio,
    samples: columns.samples,
    classFit: columns.classFit ? JSON.stringify(columns.classFit) : null,
    updatedAt: columns.updatedAt.toISOString(),
    provider,
    model,
    knownSamples: known.samples,
  });
  return updated.length > 0 ? next : null;
}

/** The row read and written under its lock (created first if missing). */
async function recordLocked(
  db: Db,
  provider: string,
  model: string,
  samples: readonly CalibrationSample[],
): Promise<Calibration> {
  const where = and(eq(modelCalibration.provider, provider), eq(modelCalibration.model, model));
  return db.transaction(async (tx) => {
    await tx
      .insert(modelCalibration)
      .values({ provider, model, ratio: 1, samples: 0 })
      .onConflictDoNothing();
    const [row] = await tx.select(columns).from(modelCalibration).where(where).for("update");
    if (!row) throw new Error("calibration row vanished inside its transaction");
    const next = afterSamples(toCalibration(row), samples);
    await tx.update(modelCalibration).set(storedColumns(next)).where(where);
    return next;
  });
}
