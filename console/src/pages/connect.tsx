/**
 * How to point a client at this gateway: the base URL and ready examples for the OpenAI SDK, curl,
 * Codex and Claude Code. The key itself is never shown again (the console does not have it): the
 * examples read it from TOLLGATE_API_KEY.
 */
import { api } from '../api';
import { CopyBlock } from '../components/copy-button';
import { PageHeading } from '../components/heading';
import { ErrorNotice } from '../components/notice';
import { useKeySession } from '../session';
import { useLoad } from '../use-load';

export function ConnectPage() {
  const session = useKeySession();
  const models = useLoad(() => api.selfModels(), []);
  const origin = window.location.origin;
  const baseUrl = `${origin}/v1`;
  const model = models.data?.data[0]?.id ?? 'MODEL';
  const examples = [
    {
      id: 'curl',
      title: 'curl',
      text: `curl ${baseUrl}/chat/completions \\\n  -H "Authorization: Bearer $TOLLGATE_API_KEY" \\\n  -H "Content-Type: application/json" \\\n  -d '{"model":"${model}","messages":[{"role":"user","content":"Hello!"}]}'`,
    },
    {
      id: 'python',
      title: 'OpenAI SDK (Python)',
      text: `import os\nfrom openai import OpenAI\n\nclient = OpenAI(base_url="${baseUrl}", api_key=os.environ["TOLLGATE_API_KEY"])\nresponse = client.responses.create(model="${model}", input="Hello!")\nprint(response.output_text)`,
    },
    {
      id: 'typescript',
      title: 'OpenAI SDK (TypeScript)',
      text: `import OpenAI from 'openai';\n\nconst client = new OpenAI({ baseURL: '${baseUrl}', apiKey: process.env.TOLLGATE_API_KEY });\nconst response = await client.responses.create({ model: '${model}', input: 'Hello!' });\nconsole.log(response.output_text);`,
    },
    {
      id: 'codex',
      title: 'Codex (~/.codex/config.toml)',
      text: `model = "${model}"\nmodel_provider = "tollgate"\n\n[model_providers.tollgate]\nname = "Tollgate"\nbase_url = "${baseUrl}"\nenv_key = "TOLLGATE_API_KEY"\nwire_api = "responses"`,
    },
    {
      id: 'claude',
      title: 'Claude Code (environment)',
      text: `export ANTHROPIC_BASE_URL=${origin}\nexport ANTHROPIC_AUTH_TOKEN=$TOLLGATE_API_KEY\nexport ANTHROPIC_MODEL=${model}\nexport ANTHROPIC_DEFAULT_OPUS_MODEL=${model} ANTHROPIC_DEFAULT_SONNET_MODEL=${model} ANTHROPIC_DEFAULT_HAIKU_MODEL=${model}`,
    },
  ];
  return (
    <>
      <PageHeading title="Connect" />
      <section aria-labelledby="base-heading" class="card">
        <h2 id="base-heading">Base URL</h2>
        <CopyBlock text={baseUrl} label="the base URL" token />
        <p class="help">
          Use it with your API key (<code>{session.key.prefix}…</code>) wherever a client asks for an OpenAI base URL. Set the key as{' '}
          <code>TOLLGATE_API_KEY</code> in your environment: the examples below read it from there. The console does not show your key again.
        </p>
      </section>
      <ErrorNotice error={models.error} />
      {examples.map((example) => (
        <section key={example.id} aria-labelledby={`${example.id}-heading`} class="example">
          <h2 id={`${example.id}-heading`}>{example.title}</h2>
          <CopyBlock text={example.text} label={`the ${example.title} example`} />
        </section>
      ))}
    </>
  );
}
