import { toE164 } from './phone.js';

// A worker thread of the phone pool (phone-pool.ts): reads a batch of numbers as phone.ts does.

export interface PhoneBatch {
  numbers: string[];
  country: string;
}

export default function readBatch({ numbers, country }: PhoneBatch): (string | null)[] {
  return numbers.map((number) => toE164(number, country));
}
