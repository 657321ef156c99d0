/**
 * Alert deliveries (README, "Alerts"): each webhook delivery, newest first, with its event, where
 * it went (format and host, never the URL), where it stands, the receiver's last HTTP status, its
 * attempts, and a "Resend" action for operators (POST /admin/v1/alerts/deliveries/{id}/resend, audited).
 */
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api } from '../api';
import { PageHeading } from '../components/heading';
import { ErrorNotice, Loading, SuccessNotice } from '../components/notice';
import { Pager, usePages } from '../components/pager';
import { ActionsHeader, TableWrap } from '../components/table-wrap';
import { Time } from '../components/time';
import { roleReaches, useAdminSession } from '../session';
import type { AlertDelivery } from '../types';
import { useAction } from '../use-action';
import { useLoad } from '../use-load';

const STATES = ['pending', 'delivered', 'abandoned'] as const;
type State = (typeof STATES)[number];

export function AlertDeliveriesPage() {
  const location = useLocation();
  const raw = location.query.state ?? '';
  const state = (STATES as readonly string[]).includes(raw) ? (raw as State) : undefined;
  return (
    <>
      <PageHeading title="Alert deliveries" />
      <form role="search" class="toolbar select-toolbar" onSubmit={(event) => event.preventDefault()}>
        <div class="field">
          <label for="delivery-state">State</label>
          <select
            id="delivery-state"
            value={state ?? ''}
            onChange={(event) => {
              const value = event.currentTarget.value;
              location.route(`/console/alerts${value === '' ? '' : `?state=${value}`}`);
            }}
          >
            <option value="">Any</option>
            <option value="pending">Pending</option>
            <option value="delivered">Delivered</option>
            <option value="abandoned">Given up</option>
          </select>
        </div>
      </form>
      <DeliveryList key={state ?? ''} state={state} />
    </>
  );
}

function DeliveryList({ state }: { state: State | undefined }) {
  const pages = usePages();
  const session = useAdminSession();
  const canResend = roleReaches(session.admin_token.role, 'operator');
  const [resent, setResent] = useState<AlertDelivery | null>(null);
  const deliveries = useLoad(() => api.alertDeliveries({ state, cursor: pages.cursor }), [state, pages.cursor]);
  return (
    <section aria-label="Deliveries">
      <ErrorNotice error={deliveries.error} />
      {resent === null ? null : (
        <SuccessNotice>
          Queued again as delivery {resent.id} (event <code>{resent.event_id}</code>).
        </SuccessNotice>
      )}
      {deliveries.data === undefined ? (
        deliveries.loading ? <Loading what="the deliveries" /> : null
      ) : deliveries.data.data.length === 0 ? (
        <p>No alert deliveries{state === undefined ? '' : ' in this state'}.</p>
      ) : (
        <TableWrap label="Alert deliveries">
          <table>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Event</th>
                <th scope="col">Destination</th>
                <th scope="col">Status</th>
                <th scope="col">HTTP</th>
                <th scope="col">Attempts</th>
                {canResend ? <ActionsHeader /> : null}
              </tr>
            </thead>
            <tbody>
              {deliveries.data.data.map((delivery) => (
                <DeliveryRow
                  key={delivery.id}
                  delivery={delivery}
                  canResend={canResend}
                  onResent={(copy) => {
                    setResent(copy);
                    deliveries.reload();
                  }}
                />
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      <Pager pages={pages} nextCursor={deliveries.data?.next_cursor} label="Alert deliveries" />
    </section>
  );
}

function DeliveryRow({ delivery, canResend, onResent }: { delivery: AlertDelivery; canResend: boolean; onResent: (copy: AlertDelivery) => void }) {
  const { busy, error, attempt } = useAction();
  return (
    <tr>
      <td data-label="Time">
        <Time iso={delivery.created_at} />
      </td>
      <td data-label="Event">
        <div>
          <code>{delivery.type}</code>
          {delivery.resend_of === null ? null : (
            <div class="muted">
              resend of <code title={delivery.resend_of}>{`${delivery.resend_of.slice(0, 8)}…`}</code>
            </div>
          )}
        </div>
      </td>
      <td data-label="Destination">
        {delivery.destination === null ? (
          <span>
            <code>{delivery.webhook_id}</code> (no longer configured)
          </span>
        ) : (
          <span>
            {formatName(delivery.destination.format)} · <span title={delivery.destination.origin}>{hostOf(delivery.destination.origin)}</span>
          </span>
        )}
      </td>
      <td data-label="Status" class="wrap">
        <DeliveryState delivery={delivery} />
      </td>
      <td data-label="HTTP">{delivery.state === 'delivered' ? '2xx' : delivery.last_http_status === null ? '—' : delivery.last_http_status}</td>
      <td data-label="Attempts">
        <span title={delivery.attempts > 1 ? `${delivery.attempts - 1} ${delivery.attempts === 2 ? 'retry' : 'retries'}` : 'no retry'}>{delivery.attempts}</span>
      </td>
      {canResend ? (
        <td data-label="Actions">
          <button
            type="button"
            disabled={busy || delivery.destination === null}
            aria-label={`Resend ${delivery.type} delivery ${delivery.id}`}
            onClick={() => void attempt(async () => onResent(await api.resendAlertDelivery(delivery.id)))}
          >
            Resend
          </button>
          <ErrorNotice error={error} />
        </td>
      ) : null}
    </tr>
  );
}

function DeliveryState({ delivery }: { delivery: AlertDelivery }) {
  if (delivery.state === 'delivered') {
    return (
      <span class="status status-active">
        <span aria-hidden="true">●</span> Delivered
      </span>
    );
  }
  if (delivery.state === 'abandoned') {
    return (
      <span class="status status-deleted">
        <span aria-hidden="true">×</span> Given up{delivery.last_error === null ? '' : `: ${delivery.last_error}`}
      </span>
    );
  }
  return (
    <span class="status status-disabled">
      <span aria-hidden="true">○</span> Pending{delivery.last_error === null ? '' : ` (last: ${delivery.last_error})`}
      {delivery.next_attempt_at === null ? null : (
        <>
          , next try <Time iso={delivery.next_attempt_at} />
        </>
      )}
    </span>
  );
}

function formatName(format: string): string {
  return format === 'slack' ? 'Slack' : format === 'discord' ? 'Discord' : format === 'teams' ? 'Teams' : 'Webhook';
}

/** `hooks.slack.com` for `https://hooks.slack.com`: the column stays narrow (the origin is on hover). */
function hostOf(origin: string): string {
  try {
    return new URL(origin).host;
  } catch {
    return origin;
  }
}
