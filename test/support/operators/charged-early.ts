// A seeded bug (Sieve's intermediate-state class, on an external call): the
// charge is made before its receipt is written, and a reconcile that finds
// no receipt charges again without asking the payment service. A crash
// between the two charges twice. Unperturbed it behaves exactly like
// charged.ts.
import { invoiceOperator } from './invoices.js';

export default invoiceOperator('charged-early', 'trusts-its-receipt');
