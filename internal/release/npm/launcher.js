#!/usr/bin/env node
// acp-normalize's npm launcher (plain Node, no dependencies). It runs the
// native binary of this platform's package (an optional dependency:
// acp-normalize-<platform>-<arch>) with stdin, stdout and stderr
// inherited: the binary reads and writes the editor's own pipes, so no
// byte passes through Node. It passes SIGINT, SIGTERM and SIGHUP on and
// exits with the binary's exit code (128+N when signal N ended it).
//
// The binary runs in a process group of its own, so that a signal to the
// launcher's group (Ctrl-C in a terminal) reaches it once, from here. On
// Unix it also holds one end of a socket whose other end is this process:
// when the launcher dies in any way (SIGKILL included), the socket closes
// and the binary ends as on SIGTERM, agent and all
// (ACP_NORMALIZE_LAUNCHER_FD names the descriptor). And when the launcher's
// own parent goes away (npx killed by the editor: npm exec and its shell
// die, this process is orphaned), the binary gets SIGTERM too.
'use strict';

const { spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const pkg = require('../package.json');
const platforms = Object.keys(pkg.optionalDependencies || {});
const wanted = `${pkg.name}-${process.platform}-${process.arch}`;
const exe = process.platform === 'win32' ? 'acp-normalize.exe' : 'acp-normalize';

function fail(message) {
  process.stderr.write(`acp-normalize: ${message}\n`);
  process.exit(1);
}

function binary() {
  if (!platforms.includes(wanted)) {
    const have = platforms.map((p) => p.slice(pkg.name.length + 1)).join(', ');
    fail(`no prebuilt binary for ${process.platform}-${process.arch} (there are: ${have}); ` +
      'build one with: go install github.com/acp-normalize/acp-normalize/cmd/acp-normalize@latest');
  }
  let dir;
  try {
    dir = path.dirname(require.resolve(`${wanted}/package.json`));
  } catch (err) {
    fail(`the package ${wanted} that carries the binary is not installed ` +
      '(were optional dependencies left out, as with --omit=optional?): reinstall acp-normalize with them');
  }
  return path.join(dir, 'bin', exe);
}

const bin = binary();
const unix = process.platform !== 'win32';
const env = Object.assign({}, process.env);
const stdio = ['inherit', 'inherit', 'inherit'];
if (unix) {
  stdio.push('pipe'); // fd 3: closes when this process dies
  env.ACP_NORMALIZE_LAUNCHER_FD = '3';
} else {
  delete env.ACP_NORMALIZE_LAUNCHER_FD;
}

const forwarded = ['SIGINT', 'SIGTERM', 'SIGHUP'];
let child;
let chmodded = false;

function start() {
  child = spawn(bin, process.argv.slice(2), { stdio, env, detached: unix, windowsHide: true });
  if (child.stdio[3]) {
    child.stdio[3].on('error', () => {}); // never written; its close is the message
  }
  child.on('error', (err) => {
    if (err.code === 'EACCES' && !chmodded) {
      // Some installers drop the executable bit of files outside "bin".
      chmodded = true;
      try {
        fs.chmodSync(bin, 0o755);
        start();
        return;
      } catch (e) {
        // fall through to the message
      }
    }
    fail(`cannot run ${bin}: ${err.message}`);
  });
  child.on('exit', (code, signal) => {
    if (signal) {
      process.exit(128 + (os.constants.signals[signal] || 0));
    }
    process.exit(code === null ? 1 : code);
  });
}

for (const sig of forwarded) {
  process.on(sig, () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      try {
        child.kill(sig);
      } catch (e) {
        // already gone
      }
    }
  });
}

// Orphaned: whoever started us (npx, an editor) is gone without a signal
// for us. Checked once a second; nothing else is polled.
const parent = process.ppid;
const orphanWatch = setInterval(() => {
  if (process.ppid !== parent) {
    clearInterval(orphanWatch);
    if (child && child.exitCode === null && child.signalCode === null) {
      try {
        child.kill('SIGTERM');
      } catch (e) {
        // already gone
      }
    }
  }
}, 1000);
orphanWatch.unref();

start();
