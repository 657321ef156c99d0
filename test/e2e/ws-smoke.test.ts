import WebSocket from 'ws';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.js';

let harness: Harness;
beforeAll(async () => { harness = await startHarness(); });
afterAll(async () => { await harness.close(); });

it('smoke', async () => {
  const { secret } = await harness.newAccount('10');
  const socket = new WebSocket(harness.baseUrl.replace('http', 'ws') + '/v1/responses', { headers: { authorization: `Bearer ${secret}` } });
  const opened = new Promise((r) => socket.on('open', r));
  const messages: unknown[] = [];
  const done = new Promise<void>((resolve) => socket.on('message', (data) => { const m = JSON.parse(String(data)); messages.push(m.type); if (m.type === 'response.completed' && messages.filter(t => t === 'response.completed').length === 3) resolve(); if (m.type==='error') { console.log(m); } }));
  await opened;
  socket.send(JSON.stringify({ type: 'response.create', model: 'model-5.6', input: [{role:'developer', content:'be nice'}], generate: false }));
  socket.send(JSON.stringify({ type: 'response.create', model: 'model-5.6', input: 'hi' }));
  await new Promise((r) => setTimeout(r, 200));
  socket.send(JSON.stringify({ type: 'response.create', model: 'model-5.6', input: 'hi' }));
  await done;
  console.log(messages);
  socket.close();
});
