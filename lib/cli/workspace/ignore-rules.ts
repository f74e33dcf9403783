/**
 * Which paths of a workspace go into its archive: the always-excluded names, virtual environments, and the
 * three ignore files a TorchX user already has — `.torchxignore`, `.dockerignore` and `.gitignore`.
 *
 * - `.torchxignore` and `.dockerignore` (in the workspace root only) follow TorchX's own reading
 *   (`torchx/workspace/api.py`, `walk_workspace`): a `#` starts a comment anywhere on a line, lines are
 *   trimmed, `.` and empty lines are skipped; each line is a Python `fnmatch` pattern matched against the
 *   path relative to the root (so `*` crosses `/`); a leading `!` negates; the last matching line wins; a
 *   directory that is ignored is not entered (nothing under it can be re-included), and the entries under a
 *   directory are tested only against the lines after the last line that matched the directory. Docker's
 *   spellings that TorchX's matcher would silently never match are accepted too: a leading `/` (anchoring,
 *   which is what TorchX does anyway) and a trailing `/` are dropped, and a leading `**` followed by `/`
 *   also matches zero directories.
 *   TorchX reads `.dockerignore` for its Docker workspace (the one `aws_batch` used) and `.torchxignore`
 *   for its directory workspace; an archive serves both, so a path either file ignores is left out.
 * - `.gitignore`: git's syntax (the `ignore` package), in every directory of the workspace and in the
 *   directories above it up to the enclosing git work tree's root; a deeper file's rules win over a
 *   shallower one's, negation works as in git (a file under an ignored directory cannot be re-included).
 *
 * @module
 */
import { lstat, readFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import ignore, { type Ignore } from 'ignore';
import { compileFnmatch } from '../../specs/fnmatch.js';

/** The ignore files an archive honours, by the tool they come from. */
export const IGNORE_FILES = {
  torchx: '.torchxignore',
  docker: '.dockerignore',
  git: '.gitignore',
} as const;

/**
 * Names never packed, at any depth and whatever the ignore files say: version-control metadata, Python and
 * tool caches, Node's installed packages (host-specific binaries that the job's image must provide itself),
 * the usual virtual-environment directory names, and the stores of credentials a home directory holds (a
 * default workspace is the current directory, which may be the home directory: its SSH and GnuPG keys and
 * AWS credentials must not land in the stack's bucket, which every job role the stack knows may read).
 */
export const ALWAYS_EXCLUDED: ReadonlySet<string> = new Set([
  '.git',
  '.hg',
  '.svn',
  '.ssh',
  '.aws',
  '.gnupg',
  '.netrc',
  '.git-credentials',
  '__pycache__',
  '.pytest_cache',
  '.mypy_cache',
  '.ruff_cache',
  '.ipynb_checkpoints',
  'node_modules',
  '.venv',
  'venv',
]);

/** A directory holding one of these is a virtual environment (venv/virtualenv, conda) and is never packed. */
export const VIRTUAL_ENV_MARKERS: ReadonlySet<string> = new Set(['pyvenv.cfg', 'conda-meta']);

/** Whether a directory with these entry names is a virtual environment. */
export function isVirtualEnvListing(names: Iterable<string>): boolean {
  for (const name of names) if (VIRTUAL_ENV_MARKERS.has(name)) return true;
  return false;
}

/** The result of testing one path against a {@link TorchxIgnore}. */
export interface TorchxMatch {
  /** The index of the last line that matched, or -1. */
  readonly index: number;
  /** Whether that line ignores the path (a non-negated line). */
  readonly ignored: boolean;
}

/** The lines of a `.torchxignore` or `.dockerignore`, read and matched the way TorchX does. */
export class TorchxIgnore {
  private constructor(private readonly lines: readonly { negate: boolean; test: (p: string) => boolean }[]) {}

  /** No lines: ignores nothing. */
  static readonly EMPTY = new TorchxIgnore([]);

  /** Parses the text of the file. */
  static parse(text: string): TorchxIgnore {
    const lines: { negate: boolean; test: (p: string) => boolean }[] = [];
    for (const raw of text.split('\n')) {
      const line = (raw.split('#', 1)[0] ?? '').trim();
      if (line === '' || line === '.') continue;
      const negate = line.startsWith('!');
      const pattern = normalizeDockerPattern(negate ? line.slice(1) : line);
      if (pattern === '') continue;
      const matchers = [compileFnmatch(pattern)];
      if (pattern.startsWith('**/')) matchers.push(compileFnmatch(pattern.slice(3)));
      lines.push({ negate, test: (path) => matchers.some((matches) => matches(path)) });
    }
    return new TorchxIgnore(lines);
  }

  /** The number of lines; the `from` of a directory's children is at most this. */
  get length(): number {
    return this.lines.length;
  }

  /** Tests `path` (relative to the root, `/`-separated) against the lines from index `from` on. */
  match(path: string, from: number): TorchxMatch {
    let index = -1;
    let ignored = false;
    for (let i = from; i < this.lines.length; i += 1) {
      const line = this.lines[i] as { negate: boolean; test: (p: string) => boolean };
      if (line.test(path)) {
        index = i;
        ignored = !line.negate;
      }
    }
    return { index, ignored };
  }
}

/** Docker's spellings TorchX's matcher never matches: `/a` and `a/` both mean `a`. */
function normalizeDockerPattern(pattern: string): string {
  return pattern.replace(/^\/+/, '').replace(/\/+$/, '');
}

/** One `.gitignore`: its rules and how to turn a workspace path into a path relative to its directory. */
interface GitLayer {
  /** The workspace-relative directory of the file (`''` for the root or above it). */
  readonly base: string;
  /** For a file above the workspace: the workspace root's path relative to the file's directory, plus `/`. */
  readonly above: string;
  readonly rules: Ignore;
}

/** The rules in force for the entries of one directory while walking. */
export interface DirectoryRules {
  /** The first `.torchxignore` line that applies under this directory. */
  readonly torchxFrom: number;
  /** The first `.dockerignore` line that applies under this directory. */
  readonly dockerFrom: number;
  /** The `.gitignore` files in force, shallowest first. */
  readonly git: readonly GitLayer[];
}

/** Why a path is left out of the archive. */
export type ExclusionReason =
  | 'always-excluded'
  | 'virtual-env'
  | '.torchxignore'
  | '.dockerignore'
  | '.gitignore';

/** The verdict on one entry: left out (and why), or kept with the rules for its children if a directory. */
export type Verdict =
  | { readonly excluded: true; readonly reason: ExclusionReason }
  | { readonly excluded: false; readonly children: DirectoryRules };

/** Reads an ignore file if it is a regular file (a symlink or a directory of that name is not followed). */
async function readIgnoreFile(path: string): Promise<string | undefined> {
  try {
    const info = await lstat(path);
    if (!info.isFile()) return undefined;
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

function gitLayer(text: string, base: string, above: string): GitLayer {
  return { base, above, rules: ignore({ ignorecase: false }).add(text) };
}

/** Whether `dir` is the root of a git work tree (holds a `.git` directory, or a `.git` file for a worktree). */
async function isGitRoot(dir: string): Promise<boolean> {
  try {
    await lstat(join(dir, '.git'));
    return true;
  } catch {
    return false;
  }
}

/**
 * The `.gitignore` files above `root` up to its git work tree's root (none when `root` is not inside one, or
 * is the work tree's root), shallowest first. A file that ignores the workspace root itself is dropped: the
 * caller asked for that directory explicitly.
 */
async function gitLayersAbove(root: string): Promise<GitLayer[]> {
  if (await isGitRoot(root)) return [];
  const ancestors: string[] = [];
  let found = false;
  for (let dir = dirname(root); ; dir = dirname(dir)) {
    ancestors.push(dir);
    if (await isGitRoot(dir)) {
      found = true;
      break;
    }
    if (dirname(dir) === dir) break;
  }
  if (!found) return [];
  const layers: GitLayer[] = [];
  for (const dir of ancestors.reverse()) {
    const text = await readIgnoreFile(join(dir, IGNORE_FILES.git));
    if (text === undefined) continue;
    const above = `${relative(dir, root).split(sep).join('/')}/`;
    const layer = gitLayer(text, '', above);
    if (!layer.rules.ignores(above)) layers.push(layer);
  }
  return layers;
}

/** `rules` plus the `.gitignore` of directory `dirAbs` (workspace-relative `dirRel`) when it has one. */
async function withOwnGitignore(
  dirAbs: string,
  dirRel: string,
  rules: DirectoryRules,
): Promise<DirectoryRules> {
  const text = await readIgnoreFile(join(dirAbs, IGNORE_FILES.git));
  if (text === undefined) return rules;
  return { ...rules, git: [...rules.git, gitLayer(text, dirRel, '')] };
}

/** The ignore rules of one workspace; created by {@link WorkspaceRules.load}. */
export class WorkspaceRules {
  private constructor(
    private readonly torchx: TorchxIgnore,
    private readonly docker: TorchxIgnore,
    /** The rules for the root's own entries. */
    readonly root: DirectoryRules,
  ) {}

  /** Reads the root's `.torchxignore` and `.dockerignore` and the `.gitignore` files above and in the root. */
  static async load(root: string): Promise<WorkspaceRules> {
    const [torchx, docker, above] = await Promise.all([
      readIgnoreFile(join(root, IGNORE_FILES.torchx)),
      readIgnoreFile(join(root, IGNORE_FILES.docker)),
      gitLayersAbove(root),
    ]);
    return new WorkspaceRules(
      torchx === undefined ? TorchxIgnore.EMPTY : TorchxIgnore.parse(torchx),
      docker === undefined ? TorchxIgnore.EMPTY : TorchxIgnore.parse(docker),
      await withOwnGitignore(root, '', { torchxFrom: 0, dockerFrom: 0, git: above }),
    );
  }

  /**
   * The rules for the entries of directory `dirRel` (workspace-relative, `''` for the root), given the rules
   * its verdict returned: adds the directory's own `.gitignore` when it has one.
   */
  enter(dirAbs: string, dirRel: string, rules: DirectoryRules): Promise<DirectoryRules> {
    return withOwnGitignore(dirAbs, dirRel, rules);
  }

  /**
   * Decides whether the entry `rel` (workspace-relative, `/`-separated, named `name`) is packed, under the
   * rules of its parent directory.
   */
  decide(rel: string, name: string, isDirectory: boolean, rules: DirectoryRules): Verdict {
    if (ALWAYS_EXCLUDED.has(name)) return { excluded: true, reason: 'always-excluded' };
    const torchx = this.torchx.match(rel, rules.torchxFrom);
    if (torchx.ignored) return { excluded: true, reason: '.torchxignore' };
    const docker = this.docker.match(rel, rules.dockerFrom);
    if (docker.ignored) return { excluded: true, reason: '.dockerignore' };
    if (gitIgnores(rules.git, rel, isDirectory)) return { excluded: true, reason: '.gitignore' };
    return {
      excluded: false,
      children: {
        torchxFrom: torchx.index < 0 ? rules.torchxFrom : torchx.index + 1,
        dockerFrom: docker.index < 0 ? rules.dockerFrom : docker.index + 1,
        git: rules.git,
      },
    };
  }
}

/** git's verdict: the deepest `.gitignore` with a rule for the path decides. */
function gitIgnores(layers: readonly GitLayer[], rel: string, isDirectory: boolean): boolean {
  for (let i = layers.length - 1; i >= 0; i -= 1) {
    const layer = layers[i] as GitLayer;
    const local = layer.base === '' ? rel : rel.slice(layer.base.length + 1);
    const result = layer.rules.test(`${layer.above}${local}${isDirectory ? '/' : ''}`);
    if (result.ignored) return true;
    if (result.unignored) return false;
  }
  return false;
}
