// The directories stories write to. A story never deletes data it did not create: it wipes a directory
// only when the directory holds the marker file a story wrote when it created it (or found it empty);
// a non-empty directory without the marker (a user's journal, say) is refused, untouched.
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

/** The file a story writes into a directory it owns. */
export const STORY_MARKER = ".loomwork-story";

/** A story was pointed at a non-empty directory it did not create: nothing in it was touched. */
export class StoryDirectoryError extends Error {
  readonly code = "LOOM_STORY_DIR_NOT_OWNED";
  constructor(
    readonly dir: string,
    readonly story: string,
  ) {
    super(
      `LOOM_STORY_DIR_NOT_OWNED: the ${story} story starts from an empty directory, and ${dir} is not empty and was not ` +
        `created by a story (it has no ${STORY_MARKER} file), so it may hold someone's journal. Nothing in it was touched. ` +
        `Pass --dir (or LOOMWORK_DIR) naming a new or empty directory, or leave it out to run in a fresh temporary directory.`,
    );
    this.name = "StoryDirectoryError";
  }
}

/**
 * Makes `dir` an empty directory this story owns: created (with the marker) when missing or empty,
 * emptied when it holds the marker from an earlier story run, refused with StoryDirectoryError otherwise.
 */
export async function ownedStoryDir(dir: string, story: string): Promise<string> {
  const path = resolve(dir);
  const entries = await readdir(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return [] as string[];
    throw error;
  });
  if (entries.length > 0 && !entries.includes(STORY_MARKER)) throw new StoryDirectoryError(path, story);
  // Only what a story made is removed: the directory holds its marker.
  for (const entry of entries)
    if (entry !== STORY_MARKER) await rm(join(path, entry), { recursive: true, force: true });
  await mkdir(path, { recursive: true, mode: 0o700 }); // a journal's directory: its user's alone, as fsStores makes its own
  await writeFile(
    join(path, STORY_MARKER),
    `Created by the loomwork story "${story}"; a story may empty this directory when it runs again.\n`,
  );
  return path;
}

/** A fresh directory under the system's temporary directory (for a story run without --dir). */
export function freshStoryDir(story: string): Promise<string> {
  return mkdtemp(join(tmpdir(), `loomwork-${story}-`)).then((path) => ownedStoryDir(path, story));
}

/**
 * The story's default directory (`./.tmp/<story>`), owned as by `ownedStoryDir`; when something else is
 * there (a directory the story did not make), a fresh temporary directory instead, leaving it untouched.
 */
export async function defaultStoryDir(dir: string, story: string): Promise<string> {
  try {
    return await ownedStoryDir(dir, story);
  } catch (error) {
    if (!(error instanceof StoryDirectoryError)) throw error;
    return freshStoryDir(story);
  }
}

/** Prints a refusal the way the CLI prints its own and exits with the usage code (2); rethrows anything else. */
export function exitOnRefusal(error: unknown): never {
  if (error instanceof StoryDirectoryError) {
    process.stderr.write(`${error.story}: ${error.message}\n`);
    process.exit(2);
  }
  throw error;
}
