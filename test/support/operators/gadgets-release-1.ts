// Release 1 of the gadgets operator: Gadget in v1alpha1 only.
import { gadgetOperatorV1 } from './gadgets.js';

export default gadgetOperatorV1();
