/** Configurations the Deployment Manager tests deploy: a Service, a ConfigMap filled from it by $(ref), and one more. */
export const APP = `resources:
- name: db
  type: Service
  properties:
    spec: {ports: [{port: 5432}], selector: {app: db}}
- name: settings
  type: ConfigMap
  properties:
    data:
      dbHost: $(ref.db.spec.clusterIP)
- name: extra
  type: ConfigMap
  properties:
    data: {a: b}
`;

export const APP_WITHOUT_EXTRA = APP.slice(0, APP.indexOf('- name: extra'));
