import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { OpenResponses } from './client-errors.js';

const socket = (): Socket => ({}) as Socket;
const response = (headersSent: boolean, writableFinished = false): ServerResponse => ({ headersSent, writableFinished }) as ServerResponse;

describe('OpenResponses', () => {
  it('says a connection has a response under way from its head until it is removed or finished', () => {
    const responses = new OpenResponses();
    const connection = socket();
    expect(responses.started(connection)).toBe(false);
    const answer = response(false);
    responses.add(connection, answer);
    expect(responses.started(connection)).toBe(false);
    Object.assign(answer, { headersSent: true });
    expect(responses.started(connection)).toBe(true);
    Object.assign(answer, { writableFinished: true });
    expect(responses.started(connection)).toBe(false);
    Object.assign(answer, { writableFinished: false });
    responses.remove(connection, answer);
    expect(responses.started(connection)).toBe(false);
    expect(responses.started(socket())).toBe(false);
  });

  it('keeps a pipelined response under way behind the next request, and drops finished ones', () => {
    const responses = new OpenResponses();
    const connection = socket();
    const first = response(true);
    const finished = response(true, true);
    responses.add(connection, finished);
    responses.add(connection, first);
    responses.add(connection, response(false));
    expect(responses.started(connection)).toBe(true);
    responses.remove(connection, first);
    expect(responses.started(connection)).toBe(false);
  });
});
