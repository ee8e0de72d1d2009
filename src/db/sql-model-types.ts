// The shape of src/generated/sql-model.ts: each model's table, and each field's column or relation keys.

export type SqlField =
  | { kind: 'scalar' | 'enum' | 'unsupported'; type: string; column: string; isList: boolean; native: string | null }
  | {
      kind: 'relation';
      model: string;
      isList: boolean;
      /** A required relation's keys are all set, so its foreign key always holds. */
      isRequired: boolean;
      relationName: string;
      from: string[];
      to: string[];
    };

export interface SqlModelEntry {
  table: string;
  idFields: string[];
  fields: Record<string, SqlField>;
}

export interface SqlModel {
  models: Record<string, SqlModelEntry>;
  /** Enum name to its database type name. */
  enums: Record<string, string>;
}
