// Fold targets Node 22 LTS. When started on an older Node, fetch Node 22 from the
// npm registry into .tools/ (once) and re-run the current script on it.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";

const REQUIRED_MAJOR = 22;

export function ensureNode22() {
  const major = Number(process.versions.node.split(".")[0]);
  if (major >= REQUIRED_MAJOR) return;
  const pkg = `node-${process.platform}-${process.arch}`;
  const prefix = path.resolve(".tools/node22");
  const binDir = path.join(prefix, "node_modules", pkg, "bin");
  if (!existsSync(path.join(binDir, "node"))) {
    console.log(
      `Node ${process.versions.node} is older than ${REQUIRED_MAJOR}: fetching ${pkg}@${REQUIRED_MAJOR} from the npm registry…`,
    );
    const install = spawnSync(
      "npm",
      [
        "install",
        "--prefix",
        prefix,
        "--no-save",
        "--no-audit",
        "--no-fund",
        `${pkg}@${REQUIRED_MAJOR}`,
      ],
      { stdio: "inherit" },
    );
    if (install.status !== 0) {
      console.error(
        `Could not fetch Node ${REQUIRED_MAJOR}. Install Node ${REQUIRED_MAJOR} LTS and run again.`,
      );
      process.exit(1);
    }
  }
  const env = { ...process.env, PATH: `${binDir}${path.delimiter}${process.env.PATH}` };
  const rerun = spawnSync(path.join(binDir, "node"), process.argv.slice(1), {
    stdio: "inherit",
    env,
  });
  process.exit(rerun.status ?? 1);
}
