// kubebus errors: named classes with a stable code and a cause, plus predicates.
// The catalogue of codes and their meaning is docs/errors.md.
export type { ErrorCode } from './codes.js';
export { ErrorCodes } from './codes.js';
export { KubebusError, isKubebusError, hasCode } from './kubebus-error.js';
export { FailureClasses, classifyFailure, isSchemaMismatch } from './failure-class.js';
export type { FailureClass } from './failure-class.js';
export { isOperatorError, markKubebusError, markOperatorError } from './error-origin.js';
export {
  authorizationRefusal,
  conciseRefusal,
  explainRefusal,
  explainRefused,
  refusalAdvice,
} from './authorization-refusal.js';
export type { AuthorizationRefusal, GrantedRole } from './authorization-refusal.js';
export {
  REDACTED,
  UNSAFE_CHARACTERS,
  UNSAFE_CHARACTERS_BUT_NEWLINE,
  cutChars,
  escapeCharacter,
  publicErrorText,
  publicText,
  redactCredentials,
} from './public-text.js';
export { messageWithCause } from './first-cause.js';
