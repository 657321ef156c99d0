/**
 * Keeps the upstream's address and the gateway's upstream secret out of every text that leaves the
 * provider (error messages, messages shown to clients, forwarded failure events). Upstreams echo
 * both more often than one would hope: "Incorrect API key provided: sk-...", proxy pages naming the
 * host.
 */

/** Replaces each occurrence of the secret and of the upstream's address in a text. */
export type Redactor = (text: string) => string;

export function createRedactor(baseUrl: string, secret: string | undefined): Redactor {
  const replacements: Array<[needle: string, replacement: string]> = [];
  if (secret !== undefined && secret !== '') replacements.push([secret, '[redacted]']);
  const url = new URL(baseUrl);
  const withoutSlash = baseUrl.replace(/\/+$/, '');
  for (const needle of [baseUrl, withoutSlash, url.origin, url.host, url.hostname]) {
    if (needle !== '') replacements.push([needle, '[upstream]']);
  }
  // Longest first, so the full address is replaced before its host would break it apart.
  replacements.sort((left, right) => right[0].length - left[0].length);
  return (text) => {
    let result = text;
    for (const [needle, replacement] of replacements) {
      if (result.includes(needle)) result = result.split(needle).join(replacement);
    }
    return result;
  };
}
