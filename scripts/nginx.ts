/**
 * Running Debian's nginx from a configuration in docs/, as `npm run fleet` and `npm run cdn` do: the template is
 * filled into a scratch folder that holds everything nginx writes (pid, logs, temp files), so it runs unprivileged
 * and leaves nothing behind once the folder is removed.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { join } from 'node:path';

/** Whether a command is on the PATH (nginx, wrk). */
export function hasCommand(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

/** One line telling how to get nginx, for scripts that cannot run without it. */
export const NGINX_MISSING = 'nginx is not installed: install with `apt-get install -y nginx`';

/**
 * Replaces `{{name}}` in the directive lines of a template; comment lines keep their placeholders, which name them
 * for readers. Throws, naming the template, when a directive still holds one.
 * @example fillPlaceholders('listen {{listen}};', { listen: '127.0.0.1:8080' }, 'docs/cdn-nginx.conf') // 'listen 127.0.0.1:8080;'
 */
export function fillPlaceholders(template: string, values: Record<string, string>, templateName: string): string {
  const lines = template.split('\n').map((line) => {
    if (line.trimStart().startsWith('#')) return line;
    return line.replace(/\{\{(\w+)\}\}/g, (placeholder, name: string) => values[name] ?? placeholder);
  });
  const left = lines.find((line) => !line.trimStart().startsWith('#') && /\{\{\w+\}\}/.test(line));
  if (left) throw new Error(`${templateName} has a placeholder that is not filled: ${left.trim()}`);
  return lines.join('\n');
}

/**
 * The main nginx file around a rendered site configuration: everything nginx writes goes under `prefix`, so it
 * runs unprivileged. `writtenBy` names the command, for whoever opens the file.
 */
export function renderMainConf(prefix: string, siteConf: string, writtenBy: string): string {
  // As root, nginx would run its workers as `nobody`, who cannot write the scratch folder's temp files and cache.
  const user = process.getuid?.() === 0 ? `user ${userInfo().username};\n` : '';
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `  ${kind}_temp_path ${prefix}/temp/${kind};`).join('\n');
  return `# Written by ${writtenBy}.\n${user}worker_processes auto;\npid ${prefix}/nginx.pid;\nerror_log ${prefix}/error.log warn;\nevents { worker_connections 1024; }\nhttp {\n  access_log off;\n${temp}\n  include ${siteConf};\n}\n`;
}

/** nginx running in the foreground from a scratch folder, and where its error log is. */
export interface NginxProcess {
  child: ChildProcess;
  errorLog: string;
}

/**
 * Writes the site configuration and the main file into `prefix` (an existing scratch folder) and starts nginx in
 * the foreground in its own process group, with its output piped for the caller to show.
 */
export async function startNginx(prefix: string, siteConf: string, writtenBy: string): Promise<NginxProcess> {
  const sitePath = join(prefix, 'site.conf');
  await writeFile(sitePath, siteConf);
  await mkdir(join(prefix, 'temp'), { recursive: true });
  await writeFile(join(prefix, 'nginx.conf'), renderMainConf(prefix, sitePath, writtenBy));
  const errorLog = join(prefix, 'error.log');
  const child = spawn('nginx', ['-p', prefix, '-c', join(prefix, 'nginx.conf'), '-e', errorLog, '-g', 'daemon off;'], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  return { child, errorLog };
}

/** The last `count` lines of nginx's error log (none when it was never written). */
export function readLogTail(errorLog: string, count = 20): string[] {
  return readFileSync(errorLog, { encoding: 'utf8', flag: 'a+' }).split('\n').filter(Boolean).slice(-count);
}
