/**
 * The `torchx.pytorch.org/version` tag every scheduler writes on its jobs, with one value everywhere, and
 * the other `torchx.pytorch.org/…` labels TorchX puts on pods and containers.
 *
 * @module
 */

/** Tag key TorchX marks its jobs with (value {@link TORCHX_VERSION_TAG_VALUE}). */
export const TORCHX_VERSION_TAG = 'torchx.pytorch.org/version';

/**
 * Value of the `torchx.pytorch.org/version` tag: the TorchX version whose behaviour the schedulers
 * reproduce (TorchX 0.8.0dev0 writes it, see the Batch golden tests). TorchX's tooling (and its `list`)
 * recognises jobs by this tag's presence.
 */
export const TORCHX_VERSION_TAG_VALUE = '0.8.0dev0';

/** The `torchx.pytorch.org/…` label keys TorchX puts on Kubernetes pods and Docker containers. */
export const TORCHX_LABELS = {
  version: TORCHX_VERSION_TAG,
  appId: 'torchx.pytorch.org/app-id',
  appName: 'torchx.pytorch.org/app-name',
  roleIndex: 'torchx.pytorch.org/role-index',
  roleName: 'torchx.pytorch.org/role-name',
  replicaId: 'torchx.pytorch.org/replica-id',
} as const;
