#!/usr/bin/env node
// A Belote Arena bot in JavaScript: it plays a random legal action.
//
//   BELOTE_TOKEN=TOKEN node bot.js --address HOST:PORT [--concurrency N] [--name NAME] [--seed N]
//
// (or --token-file FILE: never the token itself on the command line, where
// other users of the machine see it).
// Everything goes over one BotService.Connect stream: Hello first, then an
// answer to every ActionRequest, matched by its request_id. The protocol is
// in ../../proto/belote/arena/v1/*.proto and docs/protocol.md.
'use strict';

const path = require('node:path');
const { parseArgs } = require('node:util');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const VERSION = 'node-bot/0.1.0';
const PROTO_DIR = path.join(__dirname, '..', '..', 'proto');

const USAGE = 'usage: BELOTE_TOKEN=TOKEN node bot.js --address HOST:PORT [--token-file FILE] [--concurrency N] [--name NAME] [--seed N]';
let opts;
try {
  opts = parseArgs({
    options: {
      address: { type: 'string', default: 'localhost:50051' },
      'token-file': { type: 'string' },
      concurrency: { type: 'string', default: '4' },
      name: { type: 'string', default: 'node-bot' },
      seed: { type: 'string' },
    },
  }).values;
} catch (e) {
  usage(e.message);
}
const concurrency = Number(opts.concurrency);
if (!Number.isInteger(concurrency) || concurrency < 1) {
  usage(`--concurrency is how many seats to play at once (at least 1), not ${opts.concurrency}`);
}
opts.token = opts['token-file']
  ? require('node:fs').readFileSync(opts['token-file'], 'utf8').trim()
  : (process.env.BELOTE_TOKEN ?? '').trim();
if (!opts.token) usage('no token: set BELOTE_TOKEN or pass --token-file (register the bot first)');

// request_id is a uint64, too big for a JavaScript number: `longs: String`
// reads it as a string, which we send back as is. `oneofs: true` names the
// part of each message that is set in `msg.message`.
const definition = protoLoader.loadSync('belote/arena/v1/bot_service.proto', {
  includeDirs: [PROTO_DIR], keepCase: true, longs: String, enums: String, defaults: true, oneofs: true,
});
const { BotService } = grpc.loadPackageDefinition(definition).belote.arena.v1;

// A small seeded generator (mulberry32), so that --seed makes a run repeatable.
function seeded(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = opts.seed === undefined ? Math.random : seeded(Number(opts.seed) | 0);

// The strategy: any of the legal action codes (a card played, a bid...).
// A real bot reads request.observation: `hand` is a mask of the seat's cards
// (bit `suit * 8 + rank`), `plays` and `bids` the deal so far.
function choose(request) {
  const legal = request.legal_actions;
  return legal[Math.floor(random() * legal.length)];
}

const client = new BotService(opts.address, grpc.credentials.createInsecure());
const call = client.Connect();
let stopping = false;

call.write({ hello: { token: opts.token, name: opts.name, version: VERSION, concurrency } });

call.on('data', (msg) => {
  // Public events (msg.events) may ride on any message; this bot ignores them.
  switch (msg.message) {
    case 'welcome':
      console.log(`connected to ${opts.address} as ${msg.welcome.bot_name} (bot ${msg.welcome.bot_id}, ` +
        `node ${msg.welcome.node_id}), ${concurrency} seats`);
      break;
    case 'match_ended': {
      const { match_id, seat, result } = msg.match_ended;
      console.log(`match ${match_id} ended for seat ${seat}: ${result.reason} ${result.totals.join('-')}` +
        (result.detail ? ` (${result.detail})` : ''));
      break;
    }
    case 'strike': {
      const s = msg.strike;
      console.log(`strike ${s.strikes} of ${s.max_strikes} in match ${s.match_id}, seat ${s.seat}: ` +
        `${s.reason}${s.detail ? ` (${s.detail})` : ''}`);
      break;
    }
    default: // match_started, flush, pong, peers: nothing to do here
  }
  // One request in `action_request`, or several in `action_requests`.
  const requests = msg.message === 'action_request' ? [msg.action_request] : [];
  requests.push(...msg.action_requests);
  if (stopping || requests.length === 0) return;
  const replies = requests.map((r) => ({ request_id: r.request_id, action: choose(r) }));
  call.write(replies.length === 1 ? { action_reply: replies[0] } : { action_replies: replies });
});

// grpc-js reports a failed stream twice: as an 'error', then as its 'status'.
call.on('error', () => {});
call.on('status', ({ code, details }) => {
  client.close();
  if (code === grpc.status.OK || stopping) {
    console.log(stopping ? 'the stream ended' : 'the referee closed the stream');
  } else if (code === grpc.status.UNAUTHENTICATED) {
    fail(3, `the referee at ${opts.address} refused the token: ${details}`);
  } else {
    fail(1, `the stream to ${opts.address} failed: ${grpc.status[code]}: ${details}`);
  }
  // Node exits once the messages already received are handled.
});

function stop(signal) {
  if (stopping) return;
  stopping = true;
  console.log(`${signal}: closing the stream`);
  call.end(); // the referee then ends the stream with OK
  setTimeout(() => process.exit(0), 3000).unref();
}
process.on('SIGINT', stop);
process.on('SIGTERM', stop);

function usage(message) {
  console.error(`node-bot: ${message}\n${USAGE}`);
  process.exit(2);
}

function fail(exitCode, message) {
  console.error(`node-bot: ${message}`);
  process.exitCode = exitCode;
}
