import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';

export interface Series {
  key: string;
  label: string;
}

const COLOURS = ['#1b6ac9', '#d9480f', '#2b8a3e', '#862e9c', '#e67700', '#0b7285', '#c2255c', '#495057'];

/**
 * A bar chart (stacked when it has several series) and the same figures as a table, which screen readers
 * read and anyone can open: the chart itself is a picture of the table.
 */
export function Chart({
  title,
  rows,
  categoryKey,
  series,
  id,
  empty = 'No data yet.',
}: {
  title: string;
  rows: Record<string, string | number>[];
  categoryKey: string;
  series: Series[];
  id: string;
  /** Said in place of the chart when there are no rows. */
  empty?: string;
}) {
  return (
    <figure className="chart" aria-labelledby={`${id}-title`} data-chart={id}>
      <figcaption id={`${id}-title`}>{title}</figcaption>
      <div className="chart-area" aria-hidden="true">
        {rows.length ? (
          <ResponsiveContainer width="100%" height={220}>
            <BarChart data={rows} accessibilityLayer={false} margin={{ top: 8, right: 8, bottom: 8, left: 0 }}>
              <CartesianGrid strokeDasharray="3 3" />
              <XAxis dataKey={categoryKey} fontSize={12} />
              <YAxis allowDecimals={false} fontSize={12} width={36} />
              <Tooltip />
              {series.length > 1 ? <Legend /> : null}
              {series.map((s, index) => (
                <Bar
                  key={s.key}
                  dataKey={s.key}
                  name={s.label}
                  stackId="all"
                  fill={COLOURS[index % COLOURS.length]}
                  isAnimationActive={false}
                />
              ))}
            </BarChart>
          </ResponsiveContainer>
        ) : (
          <p className="empty">{empty}</p>
        )}
      </div>
      <details>
        <summary>Show as a table</summary>
        <div className="table-scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">{categoryKey}</th>
                {series.map((s) => (
                  <th scope="col" key={s.key}>
                    {s.label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={String(row[categoryKey])}>
                  <th scope="row">{row[categoryKey]}</th>
                  {series.map((s) => (
                    <td key={s.key}>{row[s.key] ?? 0}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}
