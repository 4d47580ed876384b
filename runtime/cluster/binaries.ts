import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { withInstallLock } from '../install-lock.js';
import { findGo, goBuildEnv, goInstall, isExecutable, malipoCacheRoot } from '../temporal-cli.js';

/**
 * The pinned Temporal server and UI of the production topology. They are the versions the pinned
 * CLI (v1.5.1) embeds, and the image tags docker-compose.yml runs (a unit test keeps them equal).
 */
export const temporalServerVersion = 'v1.29.1';
export const temporalUiVersion = 'v2.42.1';

interface GoTool {
  /** What the binary is called in messages. */
  label: string;
  /** The cache folder under ~/.cache/malipo. */
  folder: string;
  /** Packages built together with `go install` (one module, one version). */
  packages: { pkg: string; binary: string }[];
  version: string;
  release: string;
}

const serverTools: GoTool = {
  label: 'the Temporal server and its SQL schema tool',
  folder: `temporal-server-${temporalServerVersion}`,
  packages: [
    { pkg: 'go.temporal.io/server/cmd/server', binary: 'server' },
    { pkg: 'go.temporal.io/server/cmd/tools/sql', binary: 'sql' },
  ],
  version: temporalServerVersion,
  release: `https://github.com/temporalio/temporal/releases/tag/${temporalServerVersion} (temporal_${temporalServerVersion.slice(1)}_<os>_<arch>.tar.gz holds temporal-server and temporal-sql-tool)`,
};

const uiTools: GoTool = {
  label: 'the Temporal UI server',
  folder: `temporal-ui-server-${temporalUiVersion}`,
  packages: [{ pkg: 'github.com/temporalio/ui-server/v2/cmd/server', binary: 'server' }],
  version: temporalUiVersion,
  release: `https://github.com/temporalio/ui-server/releases/tag/${temporalUiVersion} (ui-server_${temporalUiVersion.slice(1)}_<os>_<arch>.tar.gz)`,
};

export function clusterCacheDir(tool: 'server' | 'ui'): string {
  return join(malipoCacheRoot(), tool === 'server' ? serverTools.folder : uiTools.folder);
}

export interface ClusterBinaries {
  server: string;
  sqlTool: string;
  uiServer: string;
}

export interface ClusterBinaryOptions {
  serverPath?: string;
  sqlToolPath?: string;
  uiServerPath?: string;
  log?: (msg: string) => void;
}

/**
 * Finds the pinned Temporal server, SQL tool and UI server: an explicit path wins, then the cached
 * build under ~/.cache/malipo; otherwise builds them once with `go install` (about 1.5 minutes for
 * the server with a warm module cache, several minutes cold). Unlike the CLI, never downloaded: only built from source.
 */
export async function ensureClusterBinaries(opts: ClusterBinaryOptions = {}): Promise<ClusterBinaries> {
  const [server, sqlTool] = await ensureTool(serverTools, 'server', [opts.serverPath, opts.sqlToolPath], opts.log);
  const [uiServer] = await ensureTool(uiTools, 'ui', [opts.uiServerPath], opts.log);
  return { server: server!, sqlTool: sqlTool!, uiServer: uiServer! };
}

async function ensureTool(tool: GoTool, which: 'server' | 'ui', explicit: (string | undefined)[], log?: (msg: string) => void): Promise<string[]> {
  const dir = clusterCacheDir(which);
  const paths = tool.packages.map((p, i) => explicit[i] ?? join(dir, p.binary));
  for (const [i, path] of paths.entries()) {
    if (explicit[i] && !(await isExecutable(path))) throw new Error(`${path} (given for ${tool.packages[i]!.pkg}) is not an executable file.`);
  }
  const missing = async () => {
    const need: GoTool['packages'] = [];
    for (const [i, p] of tool.packages.entries()) if (!explicit[i] && !(await isExecutable(paths[i]!))) need.push(p);
    return need;
  };
  if ((await missing()).length === 0) return paths;
  return withInstallLock(join(dirname(dir), `.cluster-${which}.lock`), tool.label, async () => {
    const needBuild = await missing();
    if (needBuild.length === 0) return paths;
    await buildTool(tool, dir, needBuild, log);
    return paths;
  }, { log });
}

async function buildTool(tool: GoTool, dir: string, needBuild: GoTool['packages'], log?: (msg: string) => void): Promise<void> {
  const go = await findGo();
  const how = `Either install Go (>= 1.25) and run: npm run setup:cluster\n  or download ${tool.release}\n  and give the binaries' paths (TEMPORAL_SERVER_PATH, TEMPORAL_SQL_TOOL_PATH, TEMPORAL_UI_SERVER_PATH).`;
  if (!go) throw new Error(`${tool.label} ${tool.version} was not found in ${dir} and Go is not installed to build it.\n  ${how}`);
  const env = goBuildEnv(dir);
  log?.(
    `Building ${tool.label} ${tool.version} with Go into ${dir} (minutes, once; several cold).\n` +
      `  Go's module and build caches: ${env.GOMODCACHE} and ${env.GOCACHE} (a few GB; deletable afterwards).`,
  );
  await mkdir(dir, { recursive: true });
  try {
    await goInstall(go, needBuild.map((p) => `${p.pkg}@${tool.version}`), dir, log ?? (() => {}));
  } catch (err) {
    throw new Error(`go install of ${tool.label} ${tool.version} failed:\n${(err as Error).message}\n\n  ${how}`);
  }
}
