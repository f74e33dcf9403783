/**
 * `npm run environment-doc`: writes docs/environment.md from the table of environment variables
 * (functions/shared/env-names.ts). `npm run environment-doc -- --check` exits 1 when the committed page
 * differs (what the test checks too).
 *
 * @module
 */
import { fileURLToPath } from 'node:url';
import { ENV, ENV_DESCRIPTIONS, type EnvGroup } from '../functions/shared/env-names.js';
import { writeOrCheck } from './generated-file.js';

/** The page's sections, in order. */
const SECTIONS: Readonly<Record<EnvGroup, { title: string; intro: string }>> = {
  core: {
    title: 'General',
    intro: "The store, the bus, the schedulers on offer, the defaults of new apps, and local mode's own.",
  },
  security: {
    title: 'Security',
    intro:
      'Who may act on every app, which roles have per-session owners, what jobs may do on their hosts ' +
      '([security.md](security.md)). Each is read and checked once per cold start.',
  },
  slurm: {
    title: 'slurm',
    intro: 'The cluster the `slurm` scheduler submits to ([schedulers/slurm.md](schedulers/slurm.md)).',
  },
  kubernetes: {
    title: 'kubernetes, kubernetes_mcad',
    intro: 'The cluster the Kubernetes schedulers submit to.',
  },
};

/** docs/environment.md, as generated. */
export function renderEnvironmentDoc(): string {
  const lines = [
    '# Environment variables',
    '',
    '<!-- Generated from functions/shared/env-names.ts by `npm run environment-doc`: edit that file, not this one. -->',
    '',
    'What the functions read from their environment, deployed and behind the local server',
    '([local-mode.md](local-mode.md)). The CDK stack sets them from its props ([deploy.md](deploy.md)).',
    "The CLI's own variables (`TXS_ENDPOINT`, …) are in [cli.md](cli.md).",
  ];
  const variables = (Object.keys(ENV) as (keyof typeof ENV)[]).map((key) => ({
    name: ENV[key],
    ...ENV_DESCRIPTIONS[key],
  }));
  for (const [group, section] of Object.entries(SECTIONS)) {
    lines.push('', `## ${section.title}`, '', section.intro, '', '| Variable | Meaning |', '| --- | --- |');
    for (const variable of variables.filter((v) => v.group === group))
      lines.push(`| \`${variable.name}\` | ${variable.description.replaceAll('|', '\\|')} |`);
  }
  return `${lines.join('\n')}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeOrCheck(
    new URL('../docs/environment.md', import.meta.url),
    'docs/environment.md',
    renderEnvironmentDoc(),
    'npm run environment-doc',
  );
}
