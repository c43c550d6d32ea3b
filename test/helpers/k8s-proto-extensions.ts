// Kubernetes' protobuf messages for the admissionregistration/v1 and
// apiextensions/v1 kinds, restated as .proto text with the numbers of their
// generated.proto (and of apimachinery meta/v1 and runtime): an encoder and
// decoder independent of orch's codec, for the field-number audit
// (test/unit/protobuf-field-numbers-extensions.test.ts) and the protobuf
// requests of test/integration/protobuf-extension-kinds.test.ts. Go-inlined
// structs (Rule in RuleWithOperations, RuleWithOperations in
// NamedRuleWithOperations) are the nested messages they are on the wire;
// JSONSchemaProps' unions (OrArray, OrBool, OrStringArray) and JSON values
// (`JSON { bytes raw = 1 }`) are spelled out.

import protobuf from 'protobufjs';

const PROTO = `
syntax = "proto2";
package k8s;

message Time { optional int64 seconds = 1; optional int32 nanos = 2; }
message FieldsV1 { optional bytes Raw = 1; }
message ManagedFieldsEntry {
  optional string manager = 1; optional string operation = 2; optional string apiVersion = 3; optional Time time = 4;
  optional string fieldsType = 6; optional FieldsV1 fieldsV1 = 7; optional string subresource = 8;
}
message ObjectMeta {
  optional string name = 1; optional string generateName = 2; optional string namespace = 3; optional string uid = 5; optional string resourceVersion = 6;
  optional int64 generation = 7; optional Time creationTimestamp = 8; optional Time deletionTimestamp = 9; map<string, string> labels = 11;
  map<string, string> annotations = 12; repeated string finalizers = 14; repeated ManagedFieldsEntry managedFields = 17;
}
message ListMeta { optional string selfLink = 1; optional string resourceVersion = 2; optional string continue = 3; optional int64 remainingItemCount = 4; }

// runtime: the envelope (after the 4 bytes k8s\\0) and watch events (length-prefixed, not enveloped)
message TypeMeta { optional string apiVersion = 1; optional string kind = 2; }
message Unknown { optional TypeMeta typeMeta = 1; optional bytes raw = 2; optional string contentEncoding = 3; optional string contentType = 4; }
message RawExtension { optional bytes raw = 1; }
message WatchEvent { optional string type = 1; optional RawExtension object = 2; }
message LabelSelectorRequirement { optional string key = 1; optional string operator = 2; repeated string values = 3; }
message LabelSelector { map<string, string> matchLabels = 1; repeated LabelSelectorRequirement matchExpressions = 2; }
message Condition {
  optional string type = 1; optional string status = 2; optional int64 observedGeneration = 3;
  optional Time lastTransitionTime = 4; optional string reason = 5; optional string message = 6;
}

// admissionregistration/v1
message ServiceReference { optional string namespace = 1; optional string name = 2; optional string path = 3; optional int32 port = 4; }
message WebhookClientConfig { optional ServiceReference service = 1; optional bytes caBundle = 2; optional string url = 3; }
message Rule { repeated string apiGroups = 1; repeated string apiVersions = 2; repeated string resources = 3; optional string scope = 4; }
message RuleWithOperations { repeated string operations = 1; optional Rule rule = 2; }
message NamedRuleWithOperations { repeated string resourceNames = 1; optional RuleWithOperations ruleWithOperations = 2; }
message MatchCondition { optional string name = 1; optional string expression = 2; }
message ValidatingWebhook {
  optional string name = 1; optional WebhookClientConfig clientConfig = 2; repeated RuleWithOperations rules = 3; optional string failurePolicy = 4;
  optional LabelSelector namespaceSelector = 5; optional string sideEffects = 6; optional int32 timeoutSeconds = 7; repeated string admissionReviewVersions = 8;
  optional string matchPolicy = 9; optional LabelSelector objectSelector = 10; repeated MatchCondition matchConditions = 11;
}
message MutatingWebhook {
  optional string name = 1; optional WebhookClientConfig clientConfig = 2; repeated RuleWithOperations rules = 3; optional string failurePolicy = 4;
  optional LabelSelector namespaceSelector = 5; optional string sideEffects = 6; optional int32 timeoutSeconds = 7; repeated string admissionReviewVersions = 8;
  optional string matchPolicy = 9; optional string reinvocationPolicy = 10; optional LabelSelector objectSelector = 11; repeated MatchCondition matchConditions = 12;
}
message ValidatingWebhookConfiguration { optional ObjectMeta metadata = 1; repeated ValidatingWebhook webhooks = 2; }
message ValidatingWebhookConfigurationList { optional ListMeta metadata = 1; repeated ValidatingWebhookConfiguration items = 2; }
message MutatingWebhookConfiguration { optional ObjectMeta metadata = 1; repeated MutatingWebhook webhooks = 2; }
message ParamKind { optional string apiVersion = 1; optional string kind = 2; }
message MatchResources {
  optional LabelSelector namespaceSelector = 1; optional LabelSelector objectSelector = 2; repeated NamedRuleWithOperations resourceRules = 3;
  repeated NamedRuleWithOperations excludeResourceRules = 4; optional string matchPolicy = 7;
}
message Validation { optional string expression = 1; optional string message = 2; optional string reason = 3; optional string messageExpression = 4; }
message AuditAnnotation { optional string key = 1; optional string valueExpression = 2; }
message Variable { optional string name = 1; optional string expression = 2; }
message ValidatingAdmissionPolicySpec {
  optional ParamKind paramKind = 1; optional MatchResources matchConstraints = 2; repeated Validation validations = 3; optional string failurePolicy = 4;
  repeated AuditAnnotation auditAnnotations = 5; repeated MatchCondition matchConditions = 6; repeated Variable variables = 7;
}
message ExpressionWarning { optional string fieldRef = 2; optional string warning = 3; }
message TypeChecking { repeated ExpressionWarning expressionWarnings = 1; }
message ValidatingAdmissionPolicyStatus { optional int64 observedGeneration = 1; optional TypeChecking typeChecking = 2; repeated Condition conditions = 3; }
message ValidatingAdmissionPolicy { optional ObjectMeta metadata = 1; optional ValidatingAdmissionPolicySpec spec = 2; optional ValidatingAdmissionPolicyStatus status = 3; }
message ParamRef { optional string name = 1; optional string namespace = 2; optional LabelSelector selector = 3; optional string parameterNotFoundAction = 4; }
message ValidatingAdmissionPolicyBindingSpec { optional string policyName = 1; optional ParamRef paramRef = 2; optional MatchResources matchResources = 3; repeated string validationActions = 4; }
message ValidatingAdmissionPolicyBinding { optional ObjectMeta metadata = 1; optional ValidatingAdmissionPolicyBindingSpec spec = 2; }

// apiextensions/v1
message JSON { optional bytes raw = 1; }
message ExternalDocumentation { optional string description = 1; optional string url = 2; }
message ValidationRule {
  optional string rule = 1; optional string message = 2; optional string messageExpression = 3; optional string reason = 4;
  optional string fieldPath = 5; optional bool optionalOldSelf = 6;
}
message JSONSchemaPropsOrArray { optional JSONSchemaProps schema = 1; repeated JSONSchemaProps jSONSchemas = 2; }
message JSONSchemaPropsOrBool { optional bool allows = 1; optional JSONSchemaProps schema = 2; }
message JSONSchemaPropsOrStringArray { optional JSONSchemaProps schema = 1; repeated string property = 2; }
message JSONSchemaProps {
  optional string id = 1; optional string schema = 2; optional string ref = 3; optional string description = 4; optional string type = 5;
  optional string format = 6; optional string title = 7; optional JSON default = 8; optional double maximum = 9; optional bool exclusiveMaximum = 10;
  optional double minimum = 11; optional bool exclusiveMinimum = 12; optional int64 maxLength = 13; optional int64 minLength = 14;
  optional string pattern = 15; optional int64 maxItems = 16; optional int64 minItems = 17; optional bool uniqueItems = 18;
  optional double multipleOf = 19; repeated JSON enum = 20; optional int64 maxProperties = 21; optional int64 minProperties = 22;
  repeated string required = 23; optional JSONSchemaPropsOrArray items = 24; repeated JSONSchemaProps allOf = 25;
  repeated JSONSchemaProps oneOf = 26; repeated JSONSchemaProps anyOf = 27; optional JSONSchemaProps not = 28;
  map<string, JSONSchemaProps> properties = 29; optional JSONSchemaPropsOrBool additionalProperties = 30;
  map<string, JSONSchemaProps> patternProperties = 31; map<string, JSONSchemaPropsOrStringArray> dependencies = 32;
  optional JSONSchemaPropsOrBool additionalItems = 33; map<string, JSONSchemaProps> definitions = 34;
  optional ExternalDocumentation externalDocs = 35; optional JSON example = 36; optional bool nullable = 37;
  optional bool xKubernetesPreserveUnknownFields = 38; optional bool xKubernetesEmbeddedResource = 39; optional bool xKubernetesIntOrString = 40;
  repeated string xKubernetesListMapKeys = 41; optional string xKubernetesListType = 42; optional string xKubernetesMapType = 43;
  repeated ValidationRule xKubernetesValidations = 44;
}
message CustomResourceValidation { optional JSONSchemaProps openAPIV3Schema = 1; }
message CustomResourceSubresourceStatus {}
message CustomResourceSubresourceScale { optional string specReplicasPath = 1; optional string statusReplicasPath = 2; optional string labelSelectorPath = 3; }
message CustomResourceSubresources { optional CustomResourceSubresourceStatus status = 1; optional CustomResourceSubresourceScale scale = 2; }
message CustomResourceColumnDefinition {
  optional string name = 1; optional string type = 2; optional string format = 3; optional string description = 4; optional int32 priority = 5; optional string jsonPath = 6;
}
message SelectableField { optional string jsonPath = 1; }
message CustomResourceDefinitionVersion {
  optional string name = 1; optional bool served = 2; optional bool storage = 3; optional CustomResourceValidation schema = 4;
  optional CustomResourceSubresources subresources = 5; repeated CustomResourceColumnDefinition additionalPrinterColumns = 6;
  optional bool deprecated = 7; optional string deprecationWarning = 8; repeated SelectableField selectableFields = 9;
}
message CustomResourceDefinitionNames {
  optional string plural = 1; optional string singular = 2; repeated string shortNames = 3; optional string kind = 4; optional string listKind = 5; repeated string categories = 6;
}
message WebhookConversion { optional WebhookClientConfig clientConfig = 2; repeated string conversionReviewVersions = 3; }
message CustomResourceConversion { optional string strategy = 1; optional WebhookConversion webhook = 2; }
message CustomResourceDefinitionSpec {
  optional string group = 1; optional CustomResourceDefinitionNames names = 3; optional string scope = 4; repeated CustomResourceDefinitionVersion versions = 7;
  optional CustomResourceConversion conversion = 9; optional bool preserveUnknownFields = 10;
}
message CustomResourceDefinitionCondition { optional string type = 1; optional string status = 2; optional Time lastTransitionTime = 3; optional string reason = 4; optional string message = 5; }
message CustomResourceDefinitionStatus { repeated CustomResourceDefinitionCondition conditions = 1; optional CustomResourceDefinitionNames acceptedNames = 2; repeated string storedVersions = 3; }
message CustomResourceDefinition { optional ObjectMeta metadata = 1; optional CustomResourceDefinitionSpec spec = 2; optional CustomResourceDefinitionStatus status = 3; }
message CustomResourceDefinitionList { optional ListMeta metadata = 1; repeated CustomResourceDefinition items = 2; }
`;

export const k8sExtensionsProto = protobuf.parse(PROTO, { keepCase: true }).root;

const PREFIX = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** an enveloped body (k8s\0 + Unknown{typeMeta, raw}) as a Kubernetes client sends it */
export function k8sEnvelope(apiVersion: string, kind: string, message: string, obj: Record<string, unknown>, root = k8sExtensionsProto): Buffer {
  const type = root.lookupType(message);
  const raw = type.encode(type.fromObject(obj)).finish();
  const unknown = root.lookupType('k8s.Unknown');
  return Buffer.concat([PREFIX, unknown.encode(unknown.fromObject({ typeMeta: { apiVersion, kind }, raw })).finish()]);
}

/** the type meta and message of an enveloped body, decoded by protobufjs (int64 as numbers, bytes as Buffers) */
export function k8sUnenvelope(body: Buffer, message: string, root = k8sExtensionsProto): { typeMeta: { apiVersion?: string; kind?: string }; obj: Record<string, unknown> } {
  if (!body.subarray(0, 4).equals(PREFIX)) throw new Error(`no k8s\\0 prefix: ${body.subarray(0, 16).toString('hex')}`);
  const unknown = root.lookupType('k8s.Unknown');
  const u = unknown.toObject(unknown.decode(body.subarray(4)), { bytes: Buffer }) as { typeMeta: { apiVersion?: string; kind?: string }; raw: Buffer };
  const type = root.lookupType(message);
  return { typeMeta: u.typeMeta, obj: type.toObject(type.decode(u.raw), { longs: Number, bytes: Buffer, defaults: false }) as Record<string, unknown> };
}
