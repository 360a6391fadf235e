// Correct: the charge is declared with `done`, so a reconcile that finds no
// receipt asks the payment service (by the call's idempotency key) before
// charging again: a crash between the charge and the receipt charges once.
import { invoiceOperator } from './invoices.js';

export default invoiceOperator('charged', 'asks-the-payment-service');
