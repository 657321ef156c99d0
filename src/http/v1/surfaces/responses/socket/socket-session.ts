/**
 * One Responses WebSocket connection (docs/wire-protocols.md §22): the client's `response.create`
 * messages, one response at a time, each run as its `POST /v1/responses` (socket-turn.ts) with the
 * socket's conversation spliced in (socket-conversation.ts); a warm-up (`generate: false`) answered
 * without a model call; anything else answered with an `error` event. The socket closes after
 * `idleMs` without a turn; a message over the size limit closes it (1009, by the WebSocket
 * library); a socket that closes mid-turn abandons the turn (billed for what was produced).
 */
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import { GatewayError } from '../../../../../errors/gateway-error.js';
import { errorBody } from '../../../../../errors/error-shapes.js';
import { idSuffix } from '../../../../../lib/ids.js';
import { SocketConversation } from './socket-conversation.js';
import { errorEvent, SocketTurn, type TurnSink } from './socket-turn.js';

export interface SocketSessionOptions {
  /** The app whose routing runs each turn. */
  app: FastifyInstance;
  /** Closes the socket after this long without a turn. */
  idleMs: number;
  now: () => number;
}

/** Close code for a socket closed after its idle time (RFC 6455 §7.4.1: going away). */
const IDLE_CLOSE = 1001;

export class SocketSession {
  readonly #socket: WebSocket;
  readonly #upgrade: FastifyRequest;
  readonly #options: SocketSessionOptions;
  readonly #conversation = new SocketConversation();
  readonly #sink: TurnSink;
  #turn: SocketTurn | undefined;
  #idle: NodeJS.Timeout | undefined;

  constructor(socket: WebSocket, upgrade: FastifyRequest, options: SocketSessionOptions) {
    this.#socket = socket;
    this.#upgrade = upgrade;
    this.#options = options;
    this.#sink = {
      send: (text, sent) => {
        if (socket.readyState !== socket.OPEN) return sent();
        socket.send(text, { binary: false }, () => sent());
      },
      get buffered() {
        return socket.bufferedAmount;
      },
      batch: (sends) => {
        // `ws` writes each frame on its own; corked, the frames of one chunk leave in one write.
        const raw = (socket as unknown as { _socket?: Socket })._socket;
        raw?.cork();
        try {
          sends();
        } finally {
          raw?.uncork();
        }
      },
    };
    socket.on('message', (data, isBinary) => this.#message(data, isBinary));
    socket.on('close', () => {
      clearTimeout(this.#idle);
      this.#turn?.abandon();
    });
    this.#waitIdle();
  }

  #message(data: unknown, isBinary: boolean): void {
    clearTimeout(this.#idle);
    const message = isBinary ? undefined : parseMessage(data);
    if (message === undefined) return this.#refuse(invalidMessage('The message is not a JSON object.'));
    if (message.type !== 'response.create') {
      const type = typeof message.type === 'string' ? message.type : String(message.type);
      return this.#refuse(new GatewayError('invalid_request', { message: `Invalid value: '${type}'. Supported values are: 'response.create'.`, param: 'type', code: 'invalid_value' }));
    }
    if (this.#turn !== undefined) {
      return this.#refuse(invalidMessage('A response is already in progress on this connection; send the next response.create after it ends.', 'response_in_progress'));
    }
    const { type: _type, generate, ...create } = message;
    if (generate === false) return this.#warmUp(create);
    this.#run(create);
  }

  #run(create: Record<string, unknown>): void {
    const { body, input } = this.#conversation.splice({ ...create, stream: true });
    const turn = new SocketTurn(this.#options.app, { headers: this.#upgrade.headers, remoteAddress: this.#upgrade.ip, body }, this.#sink);
    this.#turn = turn;
    void turn.done.then((end) => {
      this.#turn = undefined;
      if (input !== undefined && end.response?.status === 'completed') this.#conversation.remember(input, end.response);
      else this.#conversation.forget();
      this.#waitIdle();
    });
  }

  /**
   * A warm-up: the client sends its instructions and tools ahead of the first turn and continues
   * from the response it gets back. No model is called and nothing is billed; the response is
   * remembered so that the next turn reads its input.
   */
  #warmUp(create: Record<string, unknown>): void {
    const { input } = this.#conversation.splice(create);
    const response = {
      id: `resp_${idSuffix()}`,
      object: 'response',
      created_at: Math.floor(this.#options.now() / 1000),
      status: 'completed',
      model: typeof create.model === 'string' ? create.model : null,
      output: [],
      usage: { input_tokens: 0, input_tokens_details: { cached_tokens: 0 }, output_tokens: 0, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 0 },
    };
    this.#sink.send(JSON.stringify({ type: 'response.created', sequence_number: 0, response: { ...response, status: 'in_progress' } }), () => undefined);
    this.#sink.send(JSON.stringify({ type: 'response.completed', sequence_number: 1, response }), () => undefined);
    if (input === undefined) this.#conversation.forget();
    else this.#conversation.remember(input, response);
    this.#waitIdle();
  }

  #refuse(error: GatewayError): void {
    this.#sink.send(errorEvent(error.status, JSON.stringify(errorBody(error, 'openai'))), () => undefined);
    if (this.#turn === undefined) this.#waitIdle();
  }

  #waitIdle(): void {
    clearTimeout(this.#idle);
    this.#idle = setTimeout(() => this.#socket.close(IDLE_CLOSE, 'idle'), this.#options.idleMs);
    this.#idle.unref();
  }
}

function invalidMessage(message: string, code = 'invalid_value'): GatewayError {
  return new GatewayError('invalid_request', { message, code, param: null });
}

function parseMessage(data: unknown): Record<string, unknown> | undefined {
  const text = Buffer.isBuffer(data) ? data.toString('utf8') : Array.isArray(data) ? Buffer.concat(data as Buffer[]).toString('utf8') : undefined;
  if (text === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
