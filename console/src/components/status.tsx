/** Status in words with a shape beside it, so it reads the same without colour. */
export function Status({ state }: { state: 'active' | 'disabled' | 'expired' | 'deleted' }) {
  const symbol = state === 'active' ? '●' : state === 'disabled' ? '○' : state === 'expired' ? '◌' : '×';
  const label = state === 'active' ? 'Active' : state === 'disabled' ? 'Disabled' : state === 'expired' ? 'Expired' : 'Deleted';
  return (
    <span class={`status status-${state}`}>
      <span aria-hidden="true">{symbol}</span> {label}
    </span>
  );
}
