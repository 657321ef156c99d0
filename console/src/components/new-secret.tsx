/**
 * A key's secret, shown once (after create or rotate): the secret with its copy button, a ready
 * curl line and an OpenAI SDK snippet for this gateway's base URL (this page's origin).
 */
import { CopyBlock } from './copy-button';

export function NewSecret({ secret, model, onDismiss }: { secret: string; model: string; onDismiss: () => void }) {
  const baseUrl = `${window.location.origin}/v1`;
  const curl = `curl ${baseUrl}/chat/completions \\\n  -H "Authorization: Bearer ${secret}" \\\n  -H "Content-Type: application/json" \\\n  -d '{"model":"${model}","messages":[{"role":"user","content":"Hello!"}]}'`;
  const sdk = `from openai import OpenAI\n\nclient = OpenAI(base_url="${baseUrl}", api_key="${secret}")\nresponse = client.chat.completions.create(model="${model}", messages=[{"role": "user", "content": "Hello!"}])\nprint(response.choices[0].message.content)`;
  return (
    <section class="card card-highlight" aria-labelledby="new-secret-heading">
      <h2 id="new-secret-heading">The key's secret</h2>
      <p>
        <strong>Shown this once:</strong> copy it now. Tollgate keeps only its hash.
      </p>
      <CopyBlock text={secret} label="the new key" token />
      <h3>curl</h3>
      <CopyBlock text={curl} label="the curl line" />
      <h3>OpenAI SDK (Python)</h3>
      <CopyBlock text={sdk} label="the OpenAI SDK snippet" />
      <div class="form-actions">
        <button type="button" class="button-secondary" onClick={onDismiss}>
          I have copied it
        </button>
      </div>
    </section>
  );
}
