import { PageHeading } from '../components/heading';

export function NotFoundPage() {
  return (
    <>
      <PageHeading title="Page not found" />
      <p>
        There is no such page in the console. <a href="/console/">Go to the start page</a>.
      </p>
    </>
  );
}
