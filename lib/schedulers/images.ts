/**
 * TorchX's `DockerWorkspaceMixin.dryrun_push_images` for the container schedulers: roles with a local image
 * (`sha256:<hash>`) are rewritten to `<image_repo>:<hash>`, the image TorchX would push there.
 * torchx-serverless pushes nothing itself: push the image first.
 *
 * @module
 */
import { type AppDef, ValidationError } from '../specs/index.js';

const HASH_PREFIX = 'sha256:';

/** Local image → [repository, tag] it is pushed to (TorchX's `images_to_push`). */
export type ImagesToPush = Record<string, [string, string]>;

/**
 * Rewrites local images of `app` (a copy) to `<imageRepo>:<hash>` and lists them.
 *
 * @throws ValidationError naming `app.roles.<i>.image` when a role has a local image and `imageRepo` is not set.
 * @example
 * ```ts
 * withPushedImages(app, 'example.com/me/train'); // { app, imagesToPush: { 'sha256:ab': ['example.com/me/train', 'ab'] } }
 * ```
 */
export function withPushedImages(
  app: Readonly<AppDef>,
  imageRepo: string | null | undefined,
): { app: AppDef; imagesToPush: ImagesToPush } {
  const copy = structuredClone(app) as AppDef;
  const imagesToPush: ImagesToPush = {};
  copy.roles.forEach((role, i) => {
    if (!role.image.startsWith(HASH_PREFIX)) return;
    if (!imageRepo) {
      throw ValidationError.forField(
        `app.roles.${i}.image`,
        `must specify the image repository via \`image_repo\` config to be able to upload local image ${role.image}`,
      );
    }
    const hash = role.image.slice(HASH_PREFIX.length);
    imagesToPush[role.image] = [imageRepo, hash];
    role.image = `${imageRepo}:${hash}`;
  });
  return { app: copy, imagesToPush };
}
