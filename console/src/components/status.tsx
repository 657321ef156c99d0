/** Status in words with a shape beside it, so it reads the same without colour. */
export function Status({ state }: { state: 'active' | 'disabled' | 'expired' }) {
  const symbol = state === 'active' ? '●' : state === 'disabled' ? '○' : '◌';
  const label = state === 'active' ? 'Active' : state === 'disabled' ? 'Disabled' : 'Expired';
  return (
    <span class={`status status-${state}`}>
      <span aria-hidden="true">{symbol}</span> {label}
    </span>
  );
}
