import { Layout } from './layout.js';

export interface Suggestion {
  label: string;
  href: string;
}

export function ErrorPage(props: {
  status: number;
  title: string;
  message: string;
  listTitle?: string;
  list?: Suggestion[];
  /** The nearest thing that exists. */
  didYouMean?: Suggestion | undefined;
}) {
  return (
    <Layout title={props.title}>
      <h1>{props.title}</h1>
      <p id="message">{props.message}</p>
      {props.didYouMean && (
        <p id="did-you-mean">
          Did you mean <a href={props.didYouMean.href}>{props.didYouMean.label}</a>?
        </p>
      )}
      {props.list && props.list.length > 0 && (
        <section aria-labelledby="h-available">
          <h2 id="h-available">{props.listTitle ?? 'What exists'}</h2>
          <ul id="available">
            {props.list.map((s) => (
              <li>
                <a href={s.href}>{s.label}</a>
              </li>
            ))}
          </ul>
        </section>
      )}
      <p>
        <a href="/search">Search all templates</a>
      </p>
    </Layout>
  );
}
