import { Layout } from './layout.js';
import { ROWS_PER_PAGE } from './pieces.js';

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
  /** How many exist when `list` holds only the first of them (default: its length). */
  listTotal?: number;
  /** Where all of them are listed, linked from "and N more". */
  listMore?: Suggestion;
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
            {props.list.slice(0, ROWS_PER_PAGE).map((s) => (
              <li>
                <a href={s.href}>{s.label}</a>
              </li>
            ))}
            {(props.listTotal ?? props.list.length) > Math.min(props.list.length, ROWS_PER_PAGE) && (
              <li class="muted">
                {`and ${(props.listTotal ?? props.list.length) - Math.min(props.list.length, ROWS_PER_PAGE)} more`}
                {props.listMore && (
                  <>
                    {': '}
                    <a href={props.listMore.href}>{props.listMore.label}</a>
                  </>
                )}
              </li>
            )}
          </ul>
        </section>
      )}
      <p>
        <a href="/search">Search all templates</a>
      </p>
    </Layout>
  );
}
