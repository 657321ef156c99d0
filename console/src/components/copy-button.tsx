import { useState } from 'preact/hooks';

/**
 * Copies `text` to the clipboard. Where the browser refuses (no secure context, no permission),
 * it says so, and the text stays on screen to copy by hand.
 */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  async function copy(): Promise<void> {
    try {
      await navigator.clipboard.writeText(text);
      setState('copied');
    } catch {
      setState('failed');
    }
  }
  return (
    <span class="copy">
      <button type="button" class="button-small" onClick={() => void copy()}>
        Copy<span class="visually-hidden"> {label}</span>
      </button>
      <span class="copy-state" role="status">
        {state === 'copied' ? 'Copied.' : state === 'failed' ? 'Could not copy: select the text and copy it.' : ''}
      </span>
    </span>
  );
}

/**
 * A block of text to copy (a secret, a snippet), with its copy button. A `token` (one long word: a
 * secret, a URL) wraps anywhere so it is whole on a phone; code keeps its lines and scrolls.
 */
export function CopyBlock({ text, label, token = false }: { text: string; label: string; token?: boolean }) {
  return (
    <div class="copy-block">
      <pre tabIndex={0} aria-label={label} class={token ? 'token' : undefined}>
        <code>{text}</code>
      </pre>
      <CopyButton text={text} label={label} />
    </div>
  );
}
