/**
 * Key and account changes announced to every instance over Redis pub/sub, so that a key disabled
 * through one instance is refused by all of them at once rather than after their next revision
 * poll (which stays as the fallback: a message sent while an instance was disconnected is lost).
 */
import type { Redis } from 'ioredis';

export const DEFAULT_KEY_EVENTS_CHANNEL = 'tollgate:keys';

export interface KeyEventsOptions {
  /** Sends the announcements; may be shared with other ordinary commands. */
  publisher: Redis;
  /** Receives them; a client in subscriber mode can run nothing else, so give it its own. */
  subscriber: Redis;
  channel?: string;
  /** A subscription that failed (it is retried on the subscriber's next reconnection). */
  onError?: (error: unknown) => void;
}

export interface KeyEvents {
  /** Announces that a key or an account changed. Rejects when Redis cannot be reached. */
  publish(): Promise<void>;
  /**
   * Calls `onChange` on every announcement, and once each time the subscriber (re)connects later
   * (announcements made while it was away are lost, so the cache is presumed stale). Resolves once
   * subscribed when the subscriber is connected; otherwise at once, subscribing when it connects.
   * Returns the function that unsubscribes.
   */
  subscribe(onChange: () => void): Promise<() => Promise<void>>;
}

/**
 * Announces a key or account change with `publisher` alone: for the CLI, which changes keys but
 * listens to nothing. Rejects when Redis cannot be reached.
 */
export async function publishKeyChange(publisher: Redis, channel: string = DEFAULT_KEY_EVENTS_CHANNEL): Promise<void> {
  // The payload is only a hint for whoever reads the channel with redis-cli: every message means "reload".
  await publisher.publish(channel, 'changed');
}

/** The clients stay the caller's: it closes them after unsubscribing. */
export function createKeyEvents(options: KeyEventsOptions): KeyEvents {
  const channel = options.channel ?? DEFAULT_KEY_EVENTS_CHANNEL;
  const { publisher, subscriber } = options;
  return {
    publish: () => publishKeyChange(publisher, channel),

    async subscribe(onChange) {
      const onMessage = (from: string) => {
        if (from === channel) onChange();
      };
      const onReady = () => {
        // ioredis resubscribes by itself after a reconnection, but not when the first SUBSCRIBE
        // never went through; SUBSCRIBE to a channel already subscribed is harmless.
        subscriber.subscribe(channel).catch((error: unknown) => options.onError?.(error));
        onChange();
      };
      subscriber.on('message', onMessage);
      subscriber.on('ready', onReady);
      if (subscriber.status === 'ready') await subscriber.subscribe(channel);
      return async () => {
        subscriber.off('message', onMessage);
        subscriber.off('ready', onReady);
        if (subscriber.status === 'ready') await subscriber.unsubscribe(channel);
      };
    },
  };
}
