/** A small fetch wrapper for the admin API of a running harness: JSON in, status and JSON out. */
export interface AdminAnswer {
  status: number;
  body: Record<string, unknown>;
  requestId: string | null;
}

export type AdminCall = (method: string, path: string, token: string | null, body?: unknown) => Promise<AdminAnswer>;

export function adminClient(baseUrl: string): AdminCall {
  return async (method, path, token, body) => {
    const response = await fetch(`${baseUrl}/admin/v1${path}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(token === null ? {} : { authorization: `Bearer ${token}` }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>), requestId: response.headers.get('x-request-id') };
  };
}

/** Follows `next_cursor` through every page of a listing. */
export async function allPages(call: AdminCall, path: string, token: string, limit: number): Promise<{ rows: Array<Record<string, unknown>>; pages: number }> {
  const rows: Array<Record<string, unknown>> = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const separator = path.includes('?') ? '&' : '?';
    const answer = await call('GET', `${path}${separator}limit=${limit}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`, token);
    if (answer.status !== 200) throw new Error(`GET ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
    const data = answer.body.data as Array<Record<string, unknown>>;
    if (data.length > limit) throw new Error(`page of ${data.length} rows over the limit ${limit}`);
    rows.push(...data);
    pages += 1;
    cursor = answer.body.next_cursor as string | null;
    if ((cursor !== null) !== answer.body.has_more) throw new Error('has_more and next_cursor disagree');
  } while (cursor !== null && pages < 100);
  return { rows, pages };
}

/** The port of a base URL such as `http://127.0.0.1:1234`. */
export function adminServerPort(baseUrl: string): number {
  return Number(new URL(baseUrl).port);
}
