/** Signing in to the console over plain HTTP, as its page does: the credential for a session cookie. */
export function signIn(baseUrl: string, token: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${baseUrl}/console/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-tollgate-console': '1', ...headers },
    body: JSON.stringify({ token }),
  });
}

/** The `Cookie` header a browser would send back after `response` (a successful sign-in). */
export function consoleCookie(response: Response): string {
  const match = /^(tollgate_session=[^;]+)/.exec(response.headers.get('set-cookie') ?? '');
  if (response.status !== 201 || match?.[1] === undefined) throw new Error(`sign-in failed: ${response.status}`);
  return match[1];
}
