import { useMemo, useState } from 'react';
import { useMutation } from 'urql';
import { graphql } from '../gql';
import { ErrorNote } from '../parts/ErrorNote';
import { checkRows, FIELDS, guessField, readCsv, serverProblems, type Field, type RowProblem, type Table } from '../import-rows';

const Import = graphql(`
  mutation ConsoleImportContacts($input: ImportContactsInput!) {
    importContacts(input: $input) {
      groupId
      totalImported
      totalInvalid
      totalDuplicates
      totalDoNotCall
    }
  }
`);

/** Choose a file, map its columns, read the rows refused and why, then import the others as a new group. */
export function ImportContacts() {
  const [table, setTable] = useState<Table | null>(null);
  const [mapping, setMapping] = useState<Record<string, Field>>({});
  const [groupName, setGroupName] = useState('');
  const [result, importContacts] = useMutation(Import);
  const checked = useMemo(() => (table ? checkRows(table, mapping) : null), [table, mapping]);
  const phoneMapped = Object.values(mapping).includes('phone_number');

  async function choose(file: File | undefined) {
    if (!file) return;
    const read = readCsv(await file.text());
    setTable(read);
    setMapping(Object.fromEntries(read.headers.map((h) => [h, guessField(h)])));
    setGroupName((name) => name || file.name.replace(/\.csv$/i, ''));
  }

  const refusedByServer: RowProblem[] = useMemo(() => {
    const fieldErrors = result.error?.graphQLErrors.find((e) => e.extensions['fieldErrors'])?.extensions['fieldErrors'];
    return fieldErrors && checked ? serverProblems(fieldErrors as Record<string, string[]>, checked.rowNumbers) : [];
  }, [result.error, checked]);
  const problems = [...(checked?.problems ?? []), ...refusedByServer];
  const done = result.data?.importContacts;

  return (
    <>
      <p className="crumbs">
        <a href="#/contacts">Contact groups</a>
      </p>
      <h1>Import contacts</h1>
      <form
        className="form"
        onSubmit={(event) => {
          event.preventDefault();
          if (checked) importContacts({ input: { groupName, rows: checked.rows } });
        }}
      >
        <label htmlFor="csv">CSV file (a header line, then one contact a line)</label>
        <input id="csv" type="file" accept=".csv,text/csv" onChange={(e) => choose(e.target.files?.[0])} />
        <label htmlFor="groupName">New group’s name</label>
        <input id="groupName" value={groupName} onChange={(e) => setGroupName(e.target.value)} required maxLength={200} />

        {table ? (
          <fieldset>
            <legend>Columns</legend>
            <div className="mapping">
              {table.headers.map((header, index) => (
                <div key={header}>
                  <label htmlFor={`map-${index}`}>{header}</label>
                  <select
                    id={`map-${index}`}
                    value={mapping[header]}
                    onChange={(e) => setMapping({ ...mapping, [header]: e.target.value as Field })}
                  >
                    {FIELDS.map(([value, label]) => (
                      <option key={value} value={value}>
                        {label}
                      </option>
                    ))}
                  </select>
                </div>
              ))}
            </div>
            {phoneMapped ? null : <p className="error">Choose the column that holds phone numbers.</p>}
          </fieldset>
        ) : null}

        {checked ? (
          <section aria-labelledby="check-title">
            <h2 id="check-title">Check</h2>
            <p role="status" data-testid="import-summary">
              {checked.rows.length} of {table!.rows.length} rows will be imported
              {problems.length ? `; ${new Set(problems.map((p) => p.row)).size} refused (below), left out` : ''}.
            </p>
            {problems.length ? (
              <div className="table-scroll">
                <table aria-label="Refused rows">
                  <thead>
                    <tr>
                      <th scope="col">Row</th>
                      <th scope="col">Field</th>
                      <th scope="col">Problem</th>
                    </tr>
                  </thead>
                  <tbody>
                    {problems.map((p, index) => (
                      <tr key={index}>
                        <th scope="row">{p.row || '—'}</th>
                        <td>{p.field}</td>
                        <td>{p.message}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            ) : null}
          </section>
        ) : null}

        {refusedByServer.length ? null : <ErrorNote error={result.error} />}
        {done ? (
          <p role="status" className="done">
            Imported {done.totalImported} contacts ({done.totalInvalid} invalid, {done.totalDuplicates} duplicates, {done.totalDoNotCall} on
            the do-not-call list). <a href={`#/groups/${done.groupId}`}>Open the group</a>
          </p>
        ) : null}
        <div className="actions">
          <button type="submit" disabled={!checked || !checked.rows.length || !phoneMapped || result.fetching || !!done}>
            Import {checked ? checked.rows.length : ''} rows
          </button>
        </div>
      </form>
    </>
  );
}
