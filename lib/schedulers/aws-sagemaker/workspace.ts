/**
 * A training job in a workspace: SageMaker downloads the archive through an S3 input channel before the
 * container starts (with the job's execution role), and the container's entrypoint unpacks it over the image's
 * working directory before running the role's command.
 *
 * @module
 */
import type { AlgorithmSpecification, Channel } from '@aws-sdk/client-sagemaker';
import type { JobWorkspace } from '../../specs/index.js';
import { type S3Archive, s3ArchiveOf } from '../s3-workspace.js';
import { unpackThenRun } from '../workspace.js';

/** The input channel the archive arrives through (a name no TorchX channel uses). */
export const WORKSPACE_CHANNEL = 'txs-workspace';

/** Where SageMaker puts input channels in the container. */
const INPUT_DATA_DIR = '/opt/ml/input/data';

/**
 * The S3 object of a workspace's archive.
 *
 * @throws ValidationError naming `workspace` when the archive is not in S3.
 */
export function sageMakerArchiveOf(workspace: Readonly<JobWorkspace>): S3Archive {
  return s3ArchiveOf(workspace, 'aws_sagemaker');
}

/**
 * The input channel that downloads exactly the archive: `S3Prefix` of its whole key (the only object under
 * it, as keys end in `<sha256>.tar.gz`), `File` mode whatever `input_mode` says, to every instance.
 */
export function workspaceChannelOf(archive: Readonly<S3Archive>): Channel {
  return {
    ChannelName: WORKSPACE_CHANNEL,
    DataSource: {
      S3DataSource: { S3DataType: 'S3Prefix', S3Uri: archive.uri, S3DataDistributionType: 'FullyReplicated' },
    },
    InputMode: 'File',
  };
}

/** Where the archive is in the container: the channel's directory and the key's last segment. */
export function workspaceArchivePath(archive: Readonly<S3Archive>): string {
  return `${INPUT_DATA_DIR}/${WORKSPACE_CHANNEL}/${archive.key.slice(archive.key.lastIndexOf('/') + 1)}`;
}

/**
 * Wraps the entrypoint of `spec` with {@link unpackThenRun}: `ContainerEntrypoint` becomes the unpacking
 * command up to the role's entrypoint, and `ContainerArguments` stay the role's arguments, so each keeps
 * within SageMaker's 100 items of at most 256 characters.
 */
export function runInWorkspace(spec: AlgorithmSpecification, archive: Readonly<S3Archive>): void {
  const [entrypoint = ''] = spec.ContainerEntrypoint ?? [];
  spec.ContainerEntrypoint = unpackThenRun(workspaceArchivePath(archive), entrypoint, []);
}
